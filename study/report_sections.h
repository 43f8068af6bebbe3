// report_sections.h — the sections of REPORT.md, each a function that appends its markdown,
// and the cells they share. Internal to the report_*.cpp files; write_report (report.cpp)
// calls the sections in order.
#pragma once
#include <string>
#include <vector>

#include "study/report.h"
#include "study/report_markdown.h"

namespace poslab::report_detail {

// report_headline.cpp: the headline table and the lengths and distance its columns use.
struct HeadlineColumns {
  long mid = 0, far = 0;  // 4 T0 and 16 T0
  long copy_d = 0;        // the copy distance nearest 4 T0 (0: no copy.csv)
  long copy_near = 0;     // the copy distance nearest T0 / 4: inside T0
};
HeadlineColumns headline_columns(const Study& s);
void headline_section(Markdown& md, const Study& s);
// report_convergence.cpp
void budget_section(Markdown& md, const Study& s);     // B/4, B/2, B; rankings; curves
void tuning_section(Markdown& md, const Study& s);     // the learning-rate grid per scheme
void screening_section(Markdown& md, const Study& s);  // which screened schemes were promoted
void cost_section(Markdown& md, const Study& s);       // compute time, lines
void runs_section(Markdown& md, const Study& s);       // every row of runs.csv
// report_extrapolation.cpp
void extrapolation_section(Markdown& md, const Study& s);  // per scheme and length
void sliding_section(Markdown& md, const Study& s);        // loss - sliding-window loss
void scaling_section(Markdown& md, const Study& s);        // RoPE scaling, every seed
// report_probes.cpp
void attribution_section(Markdown& md, const Study& s);  // why a scheme fails past T0
void copy_section(Markdown& md, const Study& s);         // copy gain against distance
void rope_pairs_section(Markdown& md, const Study& s);   // RoPE frequency by frequency
// copy.csv: the distance nearest d on a log scale (0 without copy.csv); the copy gain
// (loss_control - loss_planted) of main scheme pe at distance d, per seed.
long nearest_distance(const Study& s, long d);
PerSeed copy_gain_per_seed(const Study& s, const std::string& pe, long d);
// report_ablations.cpp
void ablation_section(Markdown& md, const Study& s);  // breaks 1-4, embedding, t5
void figures_section(Markdown& md, const Study& s);   // RoPE from the formula, attention
// report_tasks.cpp
void tasks_section(Markdown& md, const Study& s);  // unscramble, reverse, passkey
// tasks.csv, passkey: exact match at the test length nearest `factor` x the training length,
// mean over pe's seeds at >= 90% in distribution: "87.5% (L=1024; 2 of 3 seeds)"; n/a where
// no test length is within a factor sqrt(2) of it.
std::string passkey_cell(const Study& s, const std::string& pe, long factor);

}  // namespace poslab::report_detail
