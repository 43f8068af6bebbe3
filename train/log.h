// log.h — log.csv, the training log of a run: its one schema, written by the trainer and read
// by the study and the report (by column name, through data/csv.h).
//
// One row per evaluation (every eval_every steps and at the last step):
//   step          steps done
//   lr            learning rate of that step
//   train_loss    mean training loss since the previous row (nats)
//   val_loss      mean loss over the fixed val batches (nats)
//   grad_norm     global gradient norm of that step, before clipping
//   tokens_per_s  training throughput: tokens trained / seconds spent in training steps,
//                 since the process started (evaluation and checkpoint time excluded)
//   eval_seconds  seconds spent in val evaluations and checkpoint writes since the process
//                 started, up to this row's evaluation (its own checkpoint comes after it)
// A resumed run counts both from its restart. Logs written before eval_seconds existed read
// with eval_seconds = NaN.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace poslab {

struct LogRow {
  int64_t step = 0;
  double lr = 0, train_loss = 0, val_loss = 0, grad_norm = 0, tokens_per_s = 0, eval_seconds = 0;
};

const std::vector<std::string>& log_columns();
// The whole file: header, then one line per row.
std::string log_text(const std::vector<LogRow>& rows);
// Reads log.csv by column name; throws naming the file and line for a malformed one.
std::vector<LogRow> read_log(const std::string& path);

}  // namespace poslab
