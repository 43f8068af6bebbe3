// sources.cpp — the text of each corpus, source by source; what each corpus is: sources.h.
#include "data/sources.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "data/atomic_file.h"
#include "data/error.h"
#include "data/utf8.h"

namespace poslab {

namespace {

// Where Debian puts fortune files, and Python 3.11's standard library.
const std::string fortunes_dir = "/usr/share/games/fortunes";
const std::string pystdlib_dir = "/usr/lib/python3.11";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// dpkg's list of the files of an installed package: <dpkg_info>/<package>.list, or, for a
// package installed per architecture (Multi-Arch: same, as libpython3.11-stdlib),
// <dpkg_info>/<package>:<arch>.list. "" when there is none: the package is not installed.
std::string package_list_path(const std::string& package, const std::string& dpkg_info) {
  const std::string plain = dpkg_info + "/" + package + ".list";
  if (std::filesystem::exists(plain)) return plain;
  std::error_code ec;
  std::vector<std::string> qualified;
  for (const auto& entry : std::filesystem::directory_iterator(dpkg_info, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(package + ":", 0) == 0 && ends_with(name, ".list"))
      qualified.push_back(entry.path().string());
  }
  std::sort(qualified.begin(), qualified.end());  // several architectures: the first, always
  return qualified.empty() ? "" : qualified.front();
}

// Every path an installed package owns, read from dpkg's list of its files (one path a
// line). A missing list means the package is not installed: the error names the corpus that
// needs it and the command that installs it.
std::vector<std::string> package_files(const std::string& corpus, const std::string& package,
                                       const std::string& install_hint,
                                       const std::string& dpkg_info) {
  const std::string list_path = package_list_path(package, dpkg_info);
  if (list_path.empty()) {
    data_error("corpus ", corpus, ": expected Debian package ", package, " to be installed (",
               dpkg_info, "/", package, ".list), but it is not; install it with: ", install_hint);
  }
  std::vector<std::string> paths;
  const std::string list = read_file(list_path);
  size_t start = 0;
  while (start < list.size()) {
    size_t end = list.find('\n', start);
    if (end == std::string::npos) end = list.size();
    paths.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return paths;
}

// The files of one package that sit directly in fortunes_dir: no *.dat, *.u8, subfolder.
std::vector<std::string> package_fortune_files(const std::string& corpus,
                                               const std::string& package,
                                               const std::string& install_hint,
                                               const std::string& dpkg_info) {
  std::vector<std::string> files;
  for (const std::string& path : package_files(corpus, package, install_hint, dpkg_info)) {
    const std::filesystem::path p(path);
    if (p.parent_path() != fortunes_dir) continue;  // not in it, or in a subfolder
    if (ends_with(path, ".dat") || ends_with(path, ".u8")) continue;
    if (std::filesystem::is_directory(p)) continue;
    files.push_back(path);
  }
  return files;
}

// Checks the file is valid UTF-8 (the error names the byte offset), then applies the
// generic text rules of sources.h: BOM dropped, CRLF -> LF.
std::string read_text_file(const std::string& path) {
  const std::string bytes = read_file(path);
  if (bytes.empty()) data_error(path, ": expected UTF-8 text, but the file is empty");
  for (size_t pos = 0; pos < bytes.size();) utf8_next(bytes, pos, path);

  const size_t start = bytes.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  std::string text;
  text.reserve(bytes.size());
  for (size_t i = start; i < bytes.size(); ++i) {
    if (bytes[i] == '\r' && i + 1 < bytes.size() && bytes[i + 1] == '\n') continue;
    text += bytes[i];
  }
  if (text.empty()) data_error(path, ": expected UTF-8 text, but the file holds only a BOM");
  return text;
}

// Runs `command` (no shell input; stderr passes through) and returns what it printed;
// a failure to start it or a non-zero exit is an error naming `what`.
std::string command_output(const std::string& command, const std::string& what) {
  auto closer = [](FILE* f) { return pclose(f); };
  std::unique_ptr<FILE, decltype(closer)> pipe(popen((command + " </dev/null").c_str(), "r"),
                                               closer);
  if (!pipe) data_error(what, ": cannot run it");
  std::string out;
  char buf[1 << 16];
  for (size_t got; (got = std::fread(buf, 1, sizeof buf, pipe.get())) > 0;) out.append(buf, got);
  const int status = pclose(pipe.release());
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    data_error(what, ": failed (exit status ", WIFEXITED(status) ? WEXITSTATUS(status) : status,
               ")");
  }
  return out;
}

// bible's flags: -f plain output (no pretty-printing), then the range of verses.
const std::string kjv_args = "-f Gen1:1-Rev22:21";

// True when text is whole lines, the first starting "Ge1:1 " and the last "Rev22:21 ".
bool runs_genesis_to_revelation(const std::string& text) {
  if (text.empty() || text.back() != '\n') return false;
  size_t last = 0;  // where the last line starts
  if (text.size() >= 2) {
    const size_t nl = text.rfind('\n', text.size() - 2);
    last = nl == std::string::npos ? 0 : nl + 1;
  }
  return text.rfind("Ge1:1 ", 0) == 0 && text.compare(last, 9, "Rev22:21 ") == 0;
}

}  // namespace

std::vector<std::string> fortune_files(const std::string& corpus, const std::string& dpkg_info) {
  std::vector<std::string> files;
  if (corpus == "fortunes") {
    const std::string hint = "apt-get install fortunes fortunes-min";
    for (const char* package : {"fortunes", "fortunes-min"}) {
      const auto more = package_fortune_files(corpus, package, hint, dpkg_info);
      files.insert(files.end(), more.begin(), more.end());
    }
  } else if (corpus == "fortunes-zh") {
    const std::string hint = "apt-get install fortunes-zh";
    for (const std::string& path : package_fortune_files(corpus, "fortunes-zh", hint, dpkg_info)) {
      if (ends_with(path, "/tang300") || ends_with(path, "/song100")) files.push_back(path);
    }
    if (files.size() != 2) {
      data_error("corpus fortunes-zh: expected files tang300 and song100 in package ",
                 "fortunes-zh, but found ", files.size(), "; reinstall it with: ", hint);
    }
  } else {
    data_error("fortune_files: expected corpus fortunes or fortunes-zh, but got ", corpus);
  }
  std::sort(files.begin(), files.end());  // full paths share one folder: file-name order
  files.erase(std::unique(files.begin(), files.end()), files.end());
  if (files.empty()) data_error("corpus ", corpus, ": its packages list no fortune files");
  return files;
}

std::string clean_fortune_text(std::string_view bytes, bool strip_ansi, const std::string& what) {
  const std::vector<char32_t> cps = utf8_decode(bytes, what);
  std::string out;
  out.reserve(bytes.size());
  std::string line;
  for (size_t i = 0; i <= cps.size(); ++i) {
    if (i == cps.size() || cps[i] == '\n') {  // end of a line
      if (line != "%") out += line;           // the separator line becomes an empty line
      if (i < cps.size()) out += '\n';
      line.clear();
      continue;
    }
    if (strip_ansi && cps[i] == 0x1B && i + 1 < cps.size() && cps[i + 1] == '[') {
      // ESC [ <digits and ';'> m  sets a colour: skip the whole sequence.
      size_t k = i + 2;
      while (k < cps.size() && ((cps[k] >= '0' && cps[k] <= '9') || cps[k] == ';')) ++k;
      if (k < cps.size() && cps[k] == 'm') {
        i = k;
        continue;
      }
    }
    if (cps[i] != '\t' && is_control(cps[i])) continue;
    line += utf8_encode(cps[i]);
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

std::string kjv_text(const std::string& dpkg_info) {
  const std::string hint = "apt-get install bible-kjv";
  std::string program;  // the package's own `bible`, wherever its file list puts it
  for (const std::string& path : package_files("kjv", "bible-kjv", hint, dpkg_info)) {
    if (ends_with(path, "/bin/bible")) program = path;
  }
  const std::string what = "corpus kjv: `bible " + kjv_args + "`";
  if (program.empty() || program.find('\'') != std::string::npos)
    data_error(what, ": package bible-kjv lists no program bin/bible; reinstall it with: ", hint);
  const std::string text = command_output("'" + program + "' " + kjv_args, what);
  if (!runs_genesis_to_revelation(text)) {
    data_error(what, ": expected one verse a line from \"Ge1:1 ...\" to \"Rev22:21 ...\", ",
               "but got ", text.size(), " bytes starting \"", text.substr(0, 40), "\"");
  }
  return text;
}

std::vector<std::string> pystdlib_files(const std::string& dpkg_info) {
  const std::vector<std::string> packages = {"libpython3.11-minimal", "libpython3.11-stdlib"};
  std::string hint = "apt-get install";  // every package that is missing, or both
  for (const std::string& package : packages)
    if (package_list_path(package, dpkg_info).empty()) hint += " " + package;
  if (hint == "apt-get install") hint += " libpython3.11-minimal libpython3.11-stdlib";

  std::vector<std::string> files;
  for (const std::string& package : packages) {
    for (const std::string& path : package_files("pystdlib", package, hint, dpkg_info)) {
      const std::filesystem::path p(path);
      if (p.parent_path() != pystdlib_dir || !ends_with(path, ".py")) continue;  // no subfolder
      if (std::filesystem::is_directory(p)) continue;
      files.push_back(path);
    }
  }
  // One folder: sorting the paths sorts the names, byte by byte (char_traits compares bytes
  // as unsigned char).
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  if (files.empty())
    data_error("corpus pystdlib: its packages list no *.py file in ", pystdlib_dir);
  return files;
}

std::string clean_source_file(std::string_view bytes, const std::string& what) {
  const std::vector<char32_t> cps = utf8_decode(bytes, what);  // the error names the offset
  std::string out;
  out.reserve(bytes.size() + 2);
  for (size_t i = cps.size() > 0 && cps[0] == 0xFEFF ? 1 : 0; i < cps.size(); ++i) {
    // CRLF -> LF, and every other control but newline and tab dropped (a lone CR with them).
    if (cps[i] != '\n' && cps[i] != '\t' && is_control(cps[i])) continue;
    out += utf8_encode(cps[i]);
  }
  if (out.empty() || out.back() != '\n') out += '\n';  // a final newline if missing
  out += '\n';  // and the empty line that separates this file from the next
  return out;
}

std::string package_version(const std::string& package, const std::string& dpkg_status) {
  const std::string status = read_file(dpkg_status);
  // Stanzas are separated by an empty line; each field starts a line ("Version: 1.2-3").
  for (size_t start = 0; start < status.size();) {
    size_t end = status.find("\n\n", start);
    if (end == std::string::npos) end = status.size();
    const std::string stanza = "\n" + status.substr(start, end - start) + "\n";
    start = end + 2;
    // Installed, whether its wanted state is install or hold ("hold ok installed").
    if (stanza.find("\nPackage: " + package + "\n") == std::string::npos ||
        stanza.find(" ok installed\n", stanza.find("\nStatus: ")) == std::string::npos)
      continue;
    const size_t v = stanza.find("\nVersion: ");
    if (v == std::string::npos) return "";
    return stanza.substr(v + 10, stanza.find('\n', v + 10) - (v + 10));
  }
  return "";
}

std::string corpus_origin(const std::string& corpus) {
  std::vector<std::string> packages;
  if (corpus == "fortunes") packages = {"fortunes", "fortunes-min"};
  if (corpus == "fortunes-zh") packages = {"fortunes-zh"};
  if (corpus == "pystdlib") packages = {"libpython3.11-minimal", "libpython3.11-stdlib"};
  if (corpus == "kjv") packages = {"bible-kjv"};
  if (packages.empty()) return corpus;  // a file: its path
  std::string origin;
  for (const std::string& package : packages) {
    std::string version;
    if (std::filesystem::exists("/var/lib/dpkg/status")) version = package_version(package);
    origin +=
        (origin.empty() ? "" : ", ") + package + " " + (version.empty() ? "unknown" : version);
  }
  return origin;
}

std::vector<SourceText> corpus_sources(const std::string& corpus) {
  std::vector<SourceText> sources;
  if (corpus == "kjv") {
    const std::string text = kjv_text();
    return {{"bible " + kjv_args, text, text.size()}};
  }
  if (corpus == "pystdlib") {
    for (const std::string& path : pystdlib_files()) {
      const std::string bytes = read_file(path);
      sources.push_back({path, clean_source_file(bytes, path), bytes.size()});
    }
    return sources;
  }
  if (corpus != "fortunes" && corpus != "fortunes-zh") {
    return {{corpus, read_text_file(corpus), std::filesystem::file_size(corpus)}};
  }
  for (const std::string& path : fortune_files(corpus)) {
    const std::string bytes = read_file(path);
    sources.push_back(
        {path, clean_fortune_text(bytes, corpus == "fortunes-zh", path), bytes.size()});
  }
  return sources;
}

}  // namespace poslab
