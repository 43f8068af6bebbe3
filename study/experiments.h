// experiments.h — `poslab experiments` / `make experiments`: the whole study.
//
//   poslab experiments [--quick] [--out DIR]   make every pending run (--jobs at a time),
//                                              gather the results, write DIR/REPORT.md
//   poslab experiments --plan                  print each pending run as a standalone command
//   poslab experiments --job NAME              make one run (what --plan prints)
//   poslab experiments --report                gather finished runs and write the report only
// What the study measures is in study.h (the plan), how a run is made in runner.h, who makes
// the runs in schedule.h, the tables in tables.h and the report in report.h.
#pragma once

namespace poslab {

int cmd_experiments(int argc, char** argv);

}  // namespace poslab
