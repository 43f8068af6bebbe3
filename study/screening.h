// screening.h — the screened schemes (SPEC 7 v5 part 3): each trains the constant phase of a
// run on B's schedule and its B/4 cooldown branch, two seeds, and is read against the main
// schemes' B/4 branches on the same seeds. One that beats every main scheme on the loss at T0,
// or on the loss minus the sliding-window loss past T0, is promoted to a main scheme: its
// constant phase continues to B and it gains the main runs' seeds, branches and tasks.
//
// The decision is made once, when every branch it reads is evaluated, and kept in
// <out>/screening.csv (tables.h): a later retraining of a main scheme (a new learning rate,
// tune.h) does not undo a promotion already made.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "study/study.h"
#include "study/tables.h"

namespace poslab {

struct Screening {
  std::vector<std::string> promoted, not_promoted, undecided;
};

// Each screened scheme's decision: screening.csv's where it has one; else made now from the B/4
// branches' evaluations in c.out (and appended to screening.csv), or undecided while one of
// them is missing.
Screening screening_status(const StudyConfig& c);

// A scheme's B/4 scores, the means over seeds 1..c.screen_seeds: the loss at T0 and the loss
// minus the sliding-window loss on positions [T0, 16 T0) of the longest windows (NaN where a
// seed's sliding loss is missing); nullopt while a seed's branch is not evaluated.
struct B4Score {
  double loss_t0 = 0, vs_sliding = 0;
};
std::optional<B4Score> b4_score(const StudyConfig& c, const std::string& pe);

// The row of a screened scheme against the main schemes' scores; nullopt while one is missing.
std::optional<ScreeningRow> screening_row(const StudyConfig& c, const std::string& pe);

}  // namespace poslab
