// archive.cpp — bringing archived runs back into a results folder. See archive.h.
#include "study/archive.h"

#include <cstdio>
#include <filesystem>

#include "study/runner.h"

#ifndef POSLAB_SOURCE_DIR
#define POSLAB_SOURCE_DIR "."
#endif

namespace poslab {
namespace fs = std::filesystem;

std::string archive_dir(const StudyConfig& c) {
  if (c.archive.empty() || fs::path(c.archive).is_absolute()) return c.archive;
  const fs::path from_source = fs::path(POSLAB_SOURCE_DIR) / c.archive;
  return fs::exists(from_source) ? from_source.string() : c.archive;
}

void import_archived_tables(const StudyConfig& c) {
  const std::string dir = archive_dir(c);
  if (dir.empty() || !fs::exists(dir)) return;
  // the speeds earlier invocations measured first (the report's throughput table), and the
  // tuning's choices, which --plan, --job and --report read without tuning
  for (const char* file : {"throughput.csv", "tuning.csv", "screening.csv"})
    if (fs::exists(dir + "/" + file) && !fs::exists(c.out + "/" + file)) {
      fs::create_directories(c.out);
      fs::copy_file(dir + "/" + file, c.out + "/" + file);
    }
}

int import_archived_runs(const StudyConfig& c, const StudyPlan& p) {
  import_archived_tables(c);
  const std::string dir = archive_dir(c);
  if (dir.empty() || c.force || !fs::exists(dir)) return 0;
  StudyConfig archived = c;
  archived.out = fs::path(dir).parent_path().string();  // <archive>/<run> is run_dir's layout
  int n = 0;
  for (const RunSpec& r : p.runs) {
    if (marked_done(c, r) || !fs::exists(archived.run_dir(r.name) + "/done.json")) continue;
    if (!marked_done(archived, r)) {
      std::fprintf(stderr, "archive: %s was made with other options; it is made again\n",
                   r.name.c_str());
      continue;
    }
    fs::create_directories(c.run_dir(r.name));
    for (const auto& e : fs::directory_iterator(archived.run_dir(r.name)))
      fs::copy_file(e.path(), c.run_dir(r.name) + "/" + e.path().filename().string(),
                    fs::copy_options::overwrite_existing);
    const std::string model =
        fs::path(dir).parent_path().string() + "/models/" + r.scheme + ".safetensors";
    if (r.name == main_run_name(r.scheme, 1) && r.probes && fs::exists(model))
      fs::copy_file(model, c.run_dir(r.name) + "/model.safetensors",
                    fs::copy_options::overwrite_existing);
    ++n;
  }
  if (n > 0)
    std::fprintf(stderr, "archive: %d finished runs brought back from %s\n", n, dir.c_str());
  return n;
}

}  // namespace poslab
