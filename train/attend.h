// attend.h — `poslab attend`: where a trained model looks, on a text of your own.
//
// For a checkpoint and a text (any characters of its vocabulary, Chinese included) it takes
// the attention probabilities of every layer and head,
//
//   P[l,h,i,j] = softmax_j(q_i . k_j / sqrt(D) + bias[h,i,j])    (j <= i when causal)
//
// exactly as the model computes them (GPT::attention_map), and writes them three ways:
//   attention.csv   one row per (text, layer, head, query i, key j): the weight P[l,h,i,j]
//   attention.svg   one heatmap per layer and head (row = query, column = key), one colour scale
//   the terminal    the top-k keys of each query, averaged over the heads of each layer
// With a second text (--compare) both are drawn, B below A. If the second text is a
// permutation of the first (我送君 / 君送我), B is drawn in A's token order with a third panel
// per head, |P_A - P_B|, and the terminal reports, per layer and query of A, and over all,
//
//   max |P_A[l,h,i,j] - P_B[l,h,pi(i),pi(j)]|      pi: where token i of A sits in B
//
// which is float rounding for a model that cannot see order (NoPE without the causal mask is
// permutation-equivariant) and large for one that can. With the causal mask alone (causal
// NoPE), a query whose visible keys are the same set in A and B (君 in 我送君 / 送我君) gets
// the same row in layer 0, and a different one from layer 1 on: the mask leaked position.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nn/gpt.h"
#include "plot/plot.h"

namespace poslab {

// The attention of one text: tokens and P as (layers, heads, T, T), row-major.
struct AttentionMaps {
  std::string text;
  std::vector<std::string> tokens;  // the characters, one per position
  std::vector<int32_t> ids;
  int64_t layers = 0, heads = 0;
  bool causal = true;  // keys j > i are masked (weight 0) and not listed
  std::vector<double> p;
  int64_t size() const { return static_cast<int64_t>(tokens.size()); }
  double at(int64_t l, int64_t h, int64_t i, int64_t j) const {
    int64_t T = size();
    return p[((l * heads + h) * T + i) * T + j];
  }
};

// Text -> token ids. Every character missing from the vocabulary is named (with its code point
// and first position) in one error, e.g. "--text: 1 character is not in the vocabulary of
// runs/x/vocab.json (2842 characters): '你' (U+4F60) at position 2". `flag` names the input.
std::vector<int32_t> encode_text(const std::vector<std::string>& vocab, const std::string& text,
                                 const std::string& flag, const std::string& vocab_path);

// The attention of every layer and head of `model` on ids (1,T).
AttentionMaps attention_maps(const GPT& model, const std::vector<int32_t>& ids,
                             const std::vector<std::string>& vocab, const std::string& text);

// If b's tokens are a permutation of a's, pi: where token i of a sits in b (pi[i] = the first
// unused position of b holding a's token i); otherwise nothing. A repeated token may match any
// of its copies: a model that cannot see order gives identical tokens identical rows.
std::optional<std::vector<int64_t>> permutation_of(const AttentionMaps& a, const AttentionMaps& b);

// |P_A[l,h,i,j] - P_B[l,h,pi(i),pi(j)]| for one layer, head and query i of A, max over keys j.
double query_difference(const AttentionMaps& a, const AttentionMaps& b,
                        const std::vector<int64_t>& pi, int64_t l, int64_t h, int64_t i);

// If b's tokens are a permutation of a's, max |P_A[l,h,i,j] - P_B[l,h,pi(i),pi(j)]| over
// everything; otherwise nothing.
std::optional<double> permuted_difference(const AttentionMaps& a, const AttentionMaps& b);

// One row per weight: text,layer,head,query,query_token,key,key_token,weight.
std::string attention_csv(const std::vector<AttentionMaps>& texts);
// A grid of heatmaps, one column per head, one row per layer and text. When the second text is
// a permutation of the first, B is drawn in A's token order (row i and column j of its panel
// show B's weight between the tokens that sit at i and j in A; the keys B's causal mask hides
// are left empty wherever they fall), and a third row per layer shows |P_A - P_B| in that
// order: a model blind to order draws A and B alike and its difference dark.
// `head_labels[h]` names head h ("head 0, m = 1/4" for ALiBi; see head_label). Lines under the
// title say which text is which and that rows are queries, columns keys. The panels wrap into
// as few columns as keep the figure within kReadableWidth (plot.h) with cells of 18 px or more:
// every head of a layer in one row for a short text, two heads a row for a line of a poem.
// `lang` is the language of the words the figure adds (layer, head, the notes).
std::string attention_svg(const std::vector<AttentionMaps>& texts, const std::string& title,
                          const std::vector<std::string>& head_labels, Lang lang = Lang::en);
// How head h is named in a panel: "head 0" (头 0); ALiBi adds its slope ("head 0, m = 1/4"), T5
// says the bias is T5's learned one of that head ("T5 head 0").
std::string head_label(const GPTConfig& c, int64_t h, Lang lang = Lang::en);
// For each layer, each query: its top-k keys with the weight averaged over the heads.
std::string top_attended(const AttentionMaps& m, int64_t k);
// How a token is shown: a line break as ⏎, a space as ␣, a tab as ⇥.
std::string show_token(const std::string& token);

// `poslab attend` (flags as in docs/cli.md); returns the exit code, throws on bad input.
int cmd_attend(int argc, char** argv);

}  // namespace poslab
