// report_sections.h — the sections of REPORT.md, each a function that appends its markdown.
// Internal to the report_*.cpp files; write_report (report.cpp) calls them in order.
#pragma once
#include <string>
#include <vector>

#include "train/study/report.h"
#include "train/study/report_markdown.h"

namespace poslab::report_detail {

// report_convergence.cpp
void convergence_section(Markdown& md, const Study& s);  // last-20% gains, n-grams, verdicts
void cost_section(Markdown& md, const Study& s);         // compute time, tuning, lines
void runs_section(Markdown& md, const Study& s);         // every row of runs.csv
// report_extrapolation.cpp
void extrapolation_section(Markdown& md, const Study& s);  // per scheme and length
void sliding_section(Markdown& md, const Study& s);        // loss - sliding-window loss
void scaling_section(Markdown& md, const Study& s);        // RoPE scaling, every seed
void kjv_section(Markdown& md, const Study& s);            // the long-range corpus
// report_ablations.cpp
void ablation_section(Markdown& md, const Study& s);  // theta, embedding, masked LM
void tasks_section(Markdown& md, const Study& s);     // unscramble, reverse, passkey
void figures_section(Markdown& md, const Study& s);   // RoPE from the formula, attention

// report.cpp: near convergence, one bullet per scheme of group g against corpus's n-grams.
std::vector<std::string> convergence_verdicts(const Study& s, const Group& g,
                                              const std::string& corpus,
                                              const std::vector<std::string>& pes);
// report_extrapolation.cpp: rows "pe | L=... " of ppl with interval, ‡ on schemes that are not
// near convergence.
Rows ppl_rows(const Study& s, const Group& g, const std::vector<std::string>& pes,
              const std::vector<long>& lengths, const std::string& corpus);

}  // namespace poslab::report_detail
