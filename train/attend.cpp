// attend.cpp — `poslab attend` (attend.h): attention maps of a checkpoint on a user's text.
#include "train/attend.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <numeric>
#include <unordered_map>

#include "data/atomic_file.h"
#include "data/corpus.h"
#include "data/utf8.h"
#include "plot/plot.h"
#include "posenc/alibi.h"
#include "tensor/device.h"
#include "train/args.h"
#include "train/checkpoint.h"
#include "train/commands.h"

namespace poslab {

// The longest text drawn: a T x T heatmap per head stays readable up to about this size.
constexpr int64_t kMaxAttendTokens = 128;

std::vector<int32_t> encode_text(const std::vector<std::string>& vocab, const std::string& text,
                                 const std::string& flag, const std::string& vocab_path) {
  std::unordered_map<std::string, int32_t> id_of;
  for (size_t i = 0; i < vocab.size(); ++i) id_of[vocab[i]] = static_cast<int32_t>(i);
  const std::vector<char32_t> cps = utf8_decode(text, flag);
  std::vector<int32_t> ids;
  std::map<char32_t, size_t> unknown;  // character -> first position
  std::vector<char32_t> order;         // unknown characters in order of appearance
  for (size_t i = 0; i < cps.size(); ++i) {
    auto it = id_of.find(utf8_encode(cps[i]));
    if (it != id_of.end()) {
      ids.push_back(it->second);
    } else if (unknown.emplace(cps[i], i).second) {
      order.push_back(cps[i]);
    }
  }
  if (order.empty()) return ids;
  std::string names;
  for (char32_t c : order) {
    bool shown = c >= 0x20 && c != 0x7f;
    names +=
        (names.empty() ? "" : ", ") +
        (shown ? "'" + utf8_encode(c) + "' (" + code_point_name(c) + ")" : code_point_name(c)) +
        " at position " + std::to_string(unknown[c]);
  }
  fail(flag, ": ", order.size(), order.size() == 1 ? " character is" : " characters are",
       " not in the vocabulary of ", vocab_path, " (", vocab.size(), " characters): ", names);
}

AttentionMaps attention_maps(const GPT& model, const std::vector<int32_t>& ids,
                             const std::vector<std::string>& vocab, const std::string& text) {
  AttentionMaps m;
  m.text = text, m.ids = ids;
  for (int32_t id : ids) m.tokens.push_back(vocab.at(id));
  m.layers = model.config().n_layer, m.heads = model.config().n_head;
  m.causal = model.config().causal;
  const int64_t T = static_cast<int64_t>(ids.size());
  Ids batch{ids, {1, T}};
  for (const Tensor& layer : model.attention_maps(batch, m.layers - 1)) {
    std::vector<double> p = layer.to_vector();  // (1,H,T,T)
    m.p.insert(m.p.end(), p.begin(), p.end());
  }
  return m;
}

std::optional<std::vector<int64_t>> permutation_of(const AttentionMaps& a, const AttentionMaps& b) {
  if (a.size() != b.size() || a.layers != b.layers || a.heads != b.heads) return std::nullopt;
  std::map<int32_t, std::vector<int64_t>> where;  // token -> its unused positions in b, last first
  for (int64_t i = b.size() - 1; i >= 0; --i) where[b.ids[i]].push_back(i);
  std::vector<int64_t> pi(a.size());
  for (int64_t i = 0; i < a.size(); ++i) {
    auto& free = where[a.ids[i]];
    if (free.empty()) return std::nullopt;
    pi[i] = free.back();
    free.pop_back();
  }
  return pi;
}

double query_difference(const AttentionMaps& a, const AttentionMaps& b,
                        const std::vector<int64_t>& pi, int64_t l, int64_t h, int64_t i) {
  double worst = 0;
  for (int64_t j = 0; j < a.size(); ++j)
    worst = std::max(worst, std::fabs(a.at(l, h, i, j) - b.at(l, h, pi[i], pi[j])));
  return worst;
}

std::optional<double> permuted_difference(const AttentionMaps& a, const AttentionMaps& b) {
  std::optional<std::vector<int64_t>> pi = permutation_of(a, b);
  if (!pi) return std::nullopt;
  double worst = 0;
  for (int64_t l = 0; l < a.layers; ++l)
    for (int64_t h = 0; h < a.heads; ++h)
      for (int64_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, query_difference(a, b, *pi, l, h, i));
  return worst;
}

// A CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180).
static std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string attention_csv(const std::vector<AttentionMaps>& texts) {
  std::string out = "text,layer,head,query,query_token,key,key_token,weight\n";
  char w[32];
  for (const AttentionMaps& m : texts) {
    const std::string text = csv_field(m.text);
    for (int64_t l = 0; l < m.layers; ++l)
      for (int64_t h = 0; h < m.heads; ++h)
        for (int64_t i = 0; i < m.size(); ++i)
          for (int64_t j = 0; j < m.size(); ++j) {
            std::snprintf(w, sizeof w, "%.9g", m.at(l, h, i, j));
            out += text + "," + std::to_string(l) + "," + std::to_string(h) + "," +
                   std::to_string(i) + "," + csv_field(m.tokens[i]) + "," + std::to_string(j) +
                   "," + csv_field(m.tokens[j]) + "," + w + "\n";
          }
  }
  return out;
}

std::string show_token(const std::string& token) {
  if (token == "\n") return "⏎";
  if (token == " ") return "␣";
  if (token == "\t") return "⇥";
  return token;
}

std::string head_label(const GPTConfig& c, int64_t h, Lang lang) {
  const std::string n = std::to_string(h);
  if (c.pe.kind == PeKind::alibi)
    return in_lang(lang, "head ", "头 ") + n + in_lang(lang, ", m = ", "，m = ") +
           alibi_slope_text(alibi_slopes(c.n_head).at(h));
  if (c.pe.kind == PeKind::t5) return in_lang(lang, "T5 head ", "T5 头 ") + n;
  return in_lang(lang, "head ", "头 ") + n;
}

// One panel: the weights of layer l, head h of m at the positions order[0..n-1] of its text
// (order[i] is the position drawn as row and column i). A key the causal mask hides is left
// empty, not drawn as 0. `rest` (title, labels, size) is copied in.
static Heatmap panel(const AttentionMaps& m, int64_t l, int64_t h,
                     const std::vector<int64_t>& order, Heatmap rest) {
  const int64_t n = static_cast<int64_t>(order.size());
  rest.values.assign(n, std::vector<double>(n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      rest.values[i][j] = m.causal && order[j] > order[i] ? NAN : m.at(l, h, order[i], order[j]);
  return rest;
}

// 0, 1, ..., n-1: a text in its own order.
static std::vector<int64_t> positions(int64_t n) {
  std::vector<int64_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  return p;
}

// |A - B| of two panels drawn in the same order: empty where both are.
static Heatmap difference(const Heatmap& a, const Heatmap& b, Heatmap rest) {
  rest.values = a.values;
  for (size_t i = 0; i < a.values.size(); ++i)
    for (size_t j = 0; j < a.values[i].size(); ++j) {
      const double x = a.values[i][j], y = b.values[i][j];
      rest.values[i][j] = std::isnan(x) && std::isnan(y)
                              ? NAN
                              : std::fabs((std::isnan(x) ? 0 : x) - (std::isnan(y) ? 0 : y));
    }
  return rest;
}

// The grid keeps within kReadableWidth (plot.h), where GitHub shows its 11 px text at 11 px:
// the most columns c that divide H (each text's heads wrap alike) and leave cells of kMinCell
// px, then cells as large as that width allows, up to kMaxCell. A panel is its T x T cells and
// margins: kPanelMarginW for a one-character tick label left and half of one right,
// kPanelMarginH for the panel's title above and the tick labels below (plot_svg's frame_for).
constexpr double kMinCell = 18, kMaxCell = 40, kPanelMarginW = 50, kPanelMarginH = 72;

struct PanelLayout {
  int64_t columns;
  double cell;
};

static PanelLayout panel_layout(int64_t T, int64_t H) {
  const double room = kReadableWidth - kColorBarRoom;
  const auto cell_for = [&](int64_t c) { return (room / c - kPanelMarginW) / T; };
  int64_t c = H;
  while (c > 1 && (H % c != 0 || cell_for(c) < kMinCell)) --c;
  return {c, std::min(kMaxCell, cell_for(c))};
}

// The lines under the title: which text is which, and how to read a panel.
static std::vector<std::string> attention_notes(const std::vector<AttentionMaps>& texts,
                                                bool permuted, Lang lang) {
  std::vector<std::string> notes;
  if (texts.size() > 1) {
    std::string ab = "A = " + texts[0].text + in_lang(lang, ", B = ", "，B = ") + texts[1].text;
    if (permuted)
      ab += in_lang(lang, ": B drawn in A's order, |A-B| their difference",
                    "：B 按 A 的字符顺序画出，|A-B| 是两者之差");
    notes.push_back(ab);
  }
  notes.push_back(in_lang(lang,
                          "rows: queries, columns: keys; colour by the square root of the weight",
                          "行是 query，列是 key；颜色按权重的平方根"));
  return notes;
}

std::string attention_svg(const std::vector<AttentionMaps>& texts, const std::string& title,
                          const std::vector<std::string>& head_labels, Lang lang) {
  const AttentionMaps& a = texts.at(0);
  const std::vector<int64_t> identity = positions(a.size());
  // B in A's order when it is a permutation of A; otherwise in its own, and no difference.
  std::optional<std::vector<int64_t>> pi;
  if (texts.size() > 1) pi = permutation_of(a, texts[1]);
  const PanelLayout layout = panel_layout(a.size(), a.heads);
  Heatmap style;            // no axis labels: the notes say once what rows and columns are
  style.sqrt_scale = true;  // small weights, and small differences, stay visible
  style.width = layout.cell * static_cast<double>(a.size()) + kPanelMarginW;
  style.height = layout.cell * static_cast<double>(a.size()) + kPanelMarginH;
  const auto labels_of = [&](const AttentionMaps& m, const std::vector<int64_t>& order) {
    Heatmap s = style;
    for (int64_t p : order) s.col_labels.push_back(show_token(m.tokens[p]));
    s.row_labels = s.col_labels;
    return s;
  };
  std::vector<Heatmap> panels;
  for (int64_t l = 0; l < a.layers; ++l) {
    const std::string layer =
        lang == Lang::zh ? "第 " + std::to_string(l) + " 层 " : "layer " + std::to_string(l) + " ";
    std::vector<Heatmap> row_a, row_b;
    for (int64_t h = 0; h < a.heads; ++h) {
      Heatmap s = labels_of(a, identity);
      s.title = (texts.size() > 1 ? "A " : "") + layer + head_labels.at(h);
      row_a.push_back(panel(a, l, h, identity, s));
    }
    panels.insert(panels.end(), row_a.begin(), row_a.end());
    if (texts.size() == 1) continue;
    const AttentionMaps& b = texts[1];
    const std::vector<int64_t> order = pi ? *pi : positions(b.size());
    for (int64_t h = 0; h < a.heads; ++h) {
      Heatmap s = labels_of(b, order);
      s.title = "B " + layer + head_labels.at(h);
      row_b.push_back(panel(b, l, h, order, s));
    }
    panels.insert(panels.end(), row_b.begin(), row_b.end());
    if (!pi) continue;
    for (int64_t h = 0; h < a.heads; ++h) {
      Heatmap s = labels_of(a, identity);
      s.title = "|A-B| " + layer + head_labels.at(h);
      panels.push_back(difference(row_a[h], row_b[h], s));
    }
  }
  return render_heatmap_grid(title, panels, static_cast<int>(layout.columns),
                             attention_notes(texts, pi.has_value(), lang));
}

std::string top_attended(const AttentionMaps& m, int64_t k) {
  std::string out;
  char buf[64];
  for (int64_t l = 0; l < m.layers; ++l) {
    out += "  layer " + std::to_string(l) + "\n";
    for (int64_t i = 0; i < m.size(); ++i) {
      std::vector<double> mean(m.size(), 0.0);
      for (int64_t h = 0; h < m.heads; ++h)
        for (int64_t j = 0; j < m.size(); ++j) mean[j] += m.at(l, h, i, j) / m.heads;
      std::vector<int64_t> keys(m.causal ? i + 1 : m.size());  // the keys query i sees
      std::iota(keys.begin(), keys.end(), 0);
      std::stable_sort(keys.begin(), keys.end(),
                       [&](int64_t x, int64_t y) { return mean[x] > mean[y]; });
      std::snprintf(buf, sizeof buf, "    %3lld ", static_cast<long long>(i));
      out += buf + show_token(m.tokens[i]) + " ->";
      for (int64_t r = 0; r < std::min<int64_t>(k, keys.size()); ++r) {
        std::snprintf(buf, sizeof buf, "(%lld) %.2f", static_cast<long long>(keys[r]),
                      mean[keys[r]]);
        out += "  " + show_token(m.tokens[keys[r]]) + buf;
      }
      out += "\n";
    }
  }
  return out;
}

// ---------------------------------------------------------------- the command

// The vocabulary fits the checkpoint: the same size, or one less for a masked-LM (whose last
// id is the mask token, which no text contains).
static void check_vocab(const GPT& m, const std::vector<std::string>& vocab,
                        const std::string& ckpt, const std::string& vpath) {
  const int64_t V = m.config().vocab_size, n = static_cast<int64_t>(vocab.size());
  if (n == V || (n + 1 == V && !m.config().causal)) return;
  fail(vpath, ": holds ", n, " entries, but ", ckpt, " has vocab_size ", V,
       "; this vocabulary does not belong to this checkpoint (use --vocab)");
}

static AttentionMaps maps_of(const GPT& m, const std::vector<std::string>& vocab,
                             const std::string& text, const std::string& flag,
                             const std::string& vpath) {
  if (text.empty()) fail(flag, ": expected a non-empty text");
  std::vector<int32_t> ids = encode_text(vocab, text, flag, vpath);
  const int64_t T = static_cast<int64_t>(ids.size());
  if (T > kMaxAttendTokens)
    fail(flag, ": ", T, " characters, but attend draws at most ", kMaxAttendTokens);
  if (m.config().pe.kind == PeKind::learned && T > m.config().pe.max_len)
    fail(flag, ": ", T, " characters, but the learned table has max_len = ", m.config().pe.max_len);
  return attention_maps(m, ids, vocab, text);
}

// Per layer, per query of A: max over heads and keys of |P_A - P_B| with B in A's order. Then
// the same over everything, and what it means.
static void print_comparison(const AttentionMaps& a, const AttentionMaps& b) {
  std::optional<std::vector<int64_t>> pi = permutation_of(a, b);
  if (!pi) {
    std::printf("A and B are not the same characters in another order: no token-by-token match\n");
    return;
  }
  std::printf("|P_A - P_B| per query of A, max over heads and keys (B's rows in A's order):\n");
  double worst = 0;
  for (int64_t l = 0; l < a.layers; ++l) {
    std::printf("  layer %lld", static_cast<long long>(l));
    for (int64_t i = 0; i < a.size(); ++i) {
      double d = 0;
      for (int64_t h = 0; h < a.heads; ++h) d = std::max(d, query_difference(a, b, *pi, l, h, i));
      worst = std::max(worst, d);
      std::printf("  %s %.2f", show_token(a.tokens[i]).c_str(), d);
    }
    std::printf("\n");
  }
  std::printf(
      "B is A's characters in another order. Each token of A matched to its place in B:\n"
      "  max |P_A - P_B| over every layer, head, query and key = %.3g\n",
      worst);
  if (worst < 1e-5)
    std::printf(
        "  float rounding: token for token, the same attention; this model cannot tell A from B\n");
  else
    std::printf("  the weights differ: this model tells A from B\n");
}

int cmd_attend(int argc, char** argv) {
  Args a("attend",
         {{"ckpt", "FILE  runs/NAME/model.safetensors"},
          {"text", "TEXT  the text to look at (characters of the model's vocabulary)"},
          {"compare", "TEXT  a second text, drawn beside the first"},
          {"vocab", "FILE  vocab.json (default: beside the checkpoint)"},
          {"out", "DIR  where attention.svg and attention.csv go (default attend)"},
          {"top", "N  keys listed per query in the terminal (default 3)"},
          {"lang", "en|zh  the language of the SVG's words (default en)"},
          {"device", "cpu|cuda (default cpu)"}},
         argc, argv);
  if (a.help()) return std::puts(a.usage().c_str()), 0;
  Device device = device_option(a);
  std::string ckpt = a.str("ckpt", "");
  if (ckpt.empty()) fail("--ckpt: required (runs/NAME/model.safetensors)");
  if (!a.has("text")) fail("--text: required (the text to look at)");
  std::string vpath =
      a.str("vocab", (std::filesystem::path(ckpt).parent_path() / "vocab.json").string());
  std::string out = a.str("out", "attend");
  int64_t top = a.integer("top", 3, 1, kMaxAttendTokens);
  const Lang lang = parse_lang(a.str("lang", "en"), "--lang");
  Checkpoint ck = load_checkpoint(ckpt, device);
  std::vector<std::string> vocab = load_vocab(vpath);
  check_vocab(*ck.model, vocab, ckpt, vpath);
  const GPTConfig& c = ck.model->config();
  std::vector<AttentionMaps> texts{maps_of(*ck.model, vocab, a.str("text", ""), "--text", vpath)};
  if (a.has("compare"))
    texts.push_back(maps_of(*ck.model, vocab, a.str("compare", ""), "--compare", vpath));

  std::printf("%s: pe %s, %lld layers x %lld heads, causal %s\n", ckpt.c_str(), pe_name(c.pe.kind),
              (long long)c.n_layer, (long long)c.n_head, c.causal ? "true" : "false");
  for (size_t t = 0; t < texts.size(); ++t) {
    std::printf("%s%s (%lld tokens): top %lld keys per query, mean over heads\n",
                texts.size() > 1 ? (t == 0 ? "A " : "B ") : "", texts[t].text.c_str(),
                (long long)texts[t].size(), (long long)top);
    std::printf("%s", top_attended(texts[t], top).c_str());
  }
  if (texts.size() > 1) print_comparison(texts[0], texts[1]);

  std::filesystem::create_directories(out);
  const std::string pe = pe_name(c.pe.kind);
  const std::string title = lang == Lang::zh ? ckpt + " 的注意力（位置编码 " + pe + "）"
                                             : "attention of " + ckpt + " (pe " + pe + ")";
  std::vector<std::string> heads;
  for (int64_t h = 0; h < c.n_head; ++h) heads.push_back(head_label(c, h, lang));
  write_file_atomic(out + "/attention.svg", attention_svg(texts, title, heads, lang));
  write_file_atomic(out + "/attention.csv", attention_csv(texts));
  std::printf("wrote %s/attention.svg and %s/attention.csv\n", out.c_str(), out.c_str());
  return 0;
}

}  // namespace poslab
