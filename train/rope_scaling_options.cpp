#include "train/rope_scaling_options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "data/atomic_file.h"
#include "data/json.h"
#include "posenc/rope.h"

namespace poslab {

ScaledModel scaled_model(const GPTConfig& cfg) {
  return {cfg.block_size, cfg.pe.theta,
          rope_rotated_dims(cfg.n_embd / cfg.n_head, cfg.pe.rope_fraction)};
}

namespace {

using K = ScalingKind;
enum class OptionType { number, numbers, boolean };

// One option of a scaling: its flag, its HF key, and the kinds (HF types) that take it.
struct ScalingOption {
  const char* flag;  // without the dashes
  const char* key;
  OptionType type;
  std::vector<ScalingKind> kinds;
  const char* help;
};

// The table of rope_scaling_options.h.
const std::vector<ScalingOption>& scaling_options() {
  static const std::vector<ScalingOption> options{
      {"factor",
       "factor",
       OptionType::number,
       {K::linear, K::ntk, K::dynamic, K::yarn, K::llama3, K::longrope},
       "s  scaling factor >= 1 (default max(1, L/T0)); dynamic: HF's f, s = max(1, f(i+1)/T0 - "
       "(f-1)) (default 1)"},
      {"low-freq-factor",
       "low_freq_factor",
       OptionType::number,
       {K::llama3},
       "x  llama3: wavelengths above T0/x are divided by s, x > 0 (default 1)"},
      {"high-freq-factor",
       "high_freq_factor",
       OptionType::number,
       {K::llama3},
       "x  llama3: wavelengths below T0/x are kept, x > low-freq-factor (default 4)"},
      {"short-factor",
       "short_factor",
       OptionType::numbers,
       {K::longrope},
       "a,b,...  longrope: r/2 per-pair factors > 0 for windows L <= T0 (default all 1)"},
      {"long-factor",
       "long_factor",
       OptionType::numbers,
       {K::longrope},
       "a,b,...  longrope: r/2 per-pair factors > 0 for windows L > T0 (required)"},
      {"attention-factor",
       "attention_factor",
       OptionType::number,
       {K::yarn, K::longrope},
       "a  yarn, longrope: the factor on cos and sin, a > 0 (default computed from s)"},
      {"beta-fast",
       "beta_fast",
       OptionType::number,
       {K::yarn},
       "x  yarn: pairs turning more than x times over T0 keep their frequency (default 32)"},
      {"beta-slow",
       "beta_slow",
       OptionType::number,
       {K::yarn},
       "x  yarn: pairs turning fewer than x times are divided by s, 0 < x < beta-fast (default 1)"},
      {"mscale",
       "mscale",
       OptionType::number,
       {K::yarn},
       "m  yarn: with --mscale-all-dim, the factor (0.1 m ln s + 1) / (0.1 m' ln s + 1), m >= 0"},
      {"mscale-all-dim",
       "mscale_all_dim",
       OptionType::number,
       {K::yarn},
       "m'  yarn: see --mscale, m' >= 0"},
      {"yarn-truncate",
       "truncate",
       OptionType::boolean,
       {K::yarn},
       "true|false  yarn: round the ramp's ends to whole pairs (default true)"}};
  return options;
}

// The kinds of an HF config's `rope_type`, in HF's names (default: no scaling).
const std::vector<std::pair<std::string, ScalingKind>>& hf_types() {
  static const std::vector<std::pair<std::string, ScalingKind>> types{
      {"default", K::none}, {"linear", K::linear}, {"dynamic", K::dynamic},
      {"yarn", K::yarn},    {"llama3", K::llama3}, {"longrope", K::longrope}};
  return types;
}

// Where the values come from, for errors: "--beta-fast", or "cfg.json: key 'beta_fast'".
struct Source {
  std::string file;  // empty: the command line
  std::string name(const ScalingOption& o) const {
    return file.empty() ? std::string("--") + o.flag : file + ": key '" + o.key + "'";
  }
};

const ScalingOption& option_by_flag(const char* flag) {
  for (const ScalingOption& o : scaling_options())
    if (std::string(o.flag) == flag) return o;
  fail("rope scaling: no option --", flag);
}

bool belongs(const ScalingOption& o, ScalingKind kind) {
  for (ScalingKind k : o.kinds)
    if (k == kind) return true;
  return false;
}

std::string kind_list(const std::vector<ScalingKind>& kinds) {
  std::string s;
  for (ScalingKind k : kinds) s += (s.empty() ? "" : "|") + std::string(scaling_name(k));
  return s;
}

// One value as the option's type holds it.
struct OptionValue {
  double number = 0;
  std::vector<double> numbers{};
  bool boolean = false;
};

double number_from_text(const std::string& text, const std::string& where) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    fail(where, ": expected a number, but got '", text, "'");
  return v;
}

// A flag's text: a number, comma-separated numbers, or true|false.
OptionValue value_from_text(const ScalingOption& o, const std::string& text,
                            const std::string& where) {
  OptionValue v;
  if (o.type == OptionType::number) v.number = number_from_text(text, where);
  if (o.type == OptionType::boolean) {
    if (text != "true" && text != "false")
      fail(where, ": expected true or false, but got '", text, "'");
    v.boolean = text == "true";
  }
  if (o.type == OptionType::numbers) {
    size_t start = 0;
    while (true) {
      const size_t comma = text.find(',', start);
      v.numbers.push_back(number_from_text(text.substr(start, comma - start), where));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return v;
}

// A config key's JSON value, of the type HF gives it: truncate a boolean, the factor lists
// arrays of numbers, every other key a number.
OptionValue value_from_json(const ScalingOption& o, const Json& j, const std::string& where) {
  const char* expected = o.type == OptionType::number    ? "a number"
                         : o.type == OptionType::boolean ? "a boolean (true or false)"
                                                         : "an array of numbers";
  bool ok = o.type == OptionType::number    ? j.is_number()
            : o.type == OptionType::boolean ? j.is_bool()
                                            : j.is_array();
  for (const Json& item : j.items) ok = ok && item.is_number();
  if (!ok) fail(where, ": expected ", expected, ", but got ", json_kind_name(j.kind));
  OptionValue v;
  v.number = j.number, v.boolean = j.boolean;
  for (const Json& item : j.items) v.numbers.push_back(item.number);
  return v;
}

void check_list(const std::vector<double>& e, const std::string& where, int64_t r) {
  if (static_cast<int64_t>(e.size()) != r / 2)
    fail(where, ": expected r/2 = ", r / 2, " numbers (one per rotated pair of the checkpoint's ",
         r, " rotated dims), but got ", e.size());
  for (size_t i = 0; i < e.size(); ++i)
    if (!(e[i] > 0)) fail(where, ": expected numbers > 0, but number ", i + 1, " is ", e[i]);
}

void check_min(double v, double lo, bool inclusive, const std::string& where) {
  if (inclusive ? v >= lo : v > lo) return;
  fail(where, ": expected a number ", inclusive ? ">= " : "> ", lo, ", but got ", v);
}

// The value of option o into sc, its range checked (the cross checks: check_scaling).
void set_option(RopeScaling& sc, const ScalingOption& o, const OptionValue& v,
                const std::string& where, const ScaledModel& m) {
  const std::string key = o.key;
  if (o.type == OptionType::boolean) {
    sc.ramp.truncate = v.boolean;  // the one boolean
    return;
  }
  if (o.type == OptionType::numbers) {
    check_list(v.numbers, where, m.rotated_dims);
    (key == "short_factor" ? sc.short_factor : sc.long_factor) = v.numbers;
    return;
  }
  // one number: factor >= 1, the mscales >= 0, every other > 0
  if (key == "factor")
    check_min(v.number, 1, true, where);
  else if (key == "mscale" || key == "mscale_all_dim")
    check_min(v.number, 0, true, where);
  else
    check_min(v.number, 0, false, where);
  if (key == "factor") sc.factor = v.number;
  if (key == "low_freq_factor") sc.low_freq_factor = v.number;
  if (key == "high_freq_factor") sc.high_freq_factor = v.number;
  if (key == "attention_factor") sc.attention_factor = v.number;
  if (key == "beta_fast") sc.ramp.beta_fast = v.number;
  if (key == "beta_slow") sc.ramp.beta_slow = v.number;
  if (key == "mscale") sc.mscale = v.number;
  if (key == "mscale_all_dim") sc.mscale_all_dim = v.number;
}

// What involves two options, or one that must be there: hff > lff, beta_fast > beta_slow,
// longrope's long list.
void check_scaling(const RopeScaling& sc, const Source& src, const ScaledModel& m) {
  const std::string hff = src.name(option_by_flag("high-freq-factor"));
  if (sc.kind == K::llama3 && !(sc.high_freq_factor > sc.low_freq_factor))
    fail(hff, ": expected more than the low frequency factor (", sc.low_freq_factor, "), but got ",
         sc.high_freq_factor);
  const std::string fast = src.name(option_by_flag("beta-fast"));
  if (sc.kind == K::yarn && !(sc.ramp.beta_fast > sc.ramp.beta_slow))
    fail(fast, ": expected more than beta_slow (", sc.ramp.beta_slow, "), but got ",
         sc.ramp.beta_fast);
  const std::string lf = src.name(option_by_flag("long-factor"));
  if (sc.kind == K::longrope && sc.long_factor.empty())
    fail(lf, ": required with longrope: r/2 = ", m.rotated_dims / 2,
         " numbers > 0, the per-pair factors of windows longer than T0");
}

}  // namespace

std::vector<FlagSpec> rope_scaling_flags() {
  std::vector<FlagSpec> flags{
      {"rope-scaling", "linear|ntk|dynamic|yarn|llama3|longrope  RoPE scaling (default none)"},
      {"rope-scaling-config",
       "FILE  an HF rope_scaling JSON object, in place of --rope-scaling and its options"}};
  for (const ScalingOption& o : scaling_options()) flags.push_back({o.flag, o.help});
  return flags;
}

// The command line: --rope-scaling KIND and the options of that kind.
static RopeScaling scaling_from_flags(const Args& a, const ScaledModel& m) {
  RopeScaling sc;
  sc.train_len = m.train_len;
  if (a.has("rope-scaling")) sc.kind = parse_scaling(a.str("rope-scaling", ""));
  for (const ScalingOption& o : scaling_options()) {
    if (!a.has(o.flag)) continue;
    const std::string where = std::string("--") + o.flag;
    if (sc.kind == K::none) fail(where, " needs --rope-scaling ", kind_list(o.kinds));
    if (!belongs(o, sc.kind))
      fail(where, " applies only to --rope-scaling ", kind_list(o.kinds),
           ", but got --rope-scaling ", scaling_name(sc.kind));
    set_option(sc, o, value_from_text(o, a.str(o.flag, ""), where), where, m);
  }
  check_scaling(sc, Source{}, m);
  return sc;
}

RopeScaling rope_scaling_options(const Args& a, const ScaledModel& m) {
  if (!a.has("rope-scaling-config")) return scaling_from_flags(a, m);
  const std::string file = a.str("rope-scaling-config", "");
  std::vector<std::string> set_too;
  if (a.has("rope-scaling")) set_too.push_back("--rope-scaling");
  for (const ScalingOption& o : scaling_options())
    if (a.has(o.flag)) set_too.push_back(std::string("--") + o.flag);
  if (!set_too.empty())
    fail("--rope-scaling-config ", file, ": the file sets the scaling and its options, so ",
         set_too[0], " cannot be given with it");
  return rope_scaling_from_json(read_file(file), file, m);
}

// The config's type: rope_type or type (HF reads rope_type first), required, one of hf_types().
static ScalingKind config_kind(const Json& cfg, const std::string& file) {
  const Json* rt = cfg.find("rope_type");
  const Json* t = cfg.find("type");
  if (rt && rt->is_null()) rt = nullptr;
  if (t && t->is_null()) t = nullptr;
  std::string valid;
  for (const auto& [name, kind] : hf_types()) valid += (valid.empty() ? "" : "|") + name;
  if (!rt && !t) fail(file, ": key 'rope_type' (or 'type') is required: one of ", valid);
  for (const Json* j : {rt, t})
    if (j && !j->is_string())
      fail(file, ": key '", j == rt ? "rope_type" : "type", "': expected a string, but got ",
           json_kind_name(j->kind));
  if (rt && t && rt->text != t->text)
    fail(file, ": keys 'rope_type' ('", rt->text, "') and 'type' ('", t->text, "') disagree");
  const std::string& name = rt ? rt->text : t->text;
  for (const auto& [n, kind] : hf_types())
    if (n == name) return kind;
  fail(file, ": key '", rt ? "rope_type" : "type", "': expected one of ", valid, ", but got '",
       name, "'", name == "ntk" ? " (HF has no ntk type: it changes rope_theta instead)" : "");
}

// "rope_type 'llama3', whose keys are factor, low_freq_factor, high_freq_factor (and ...)".
static std::string type_keys(ScalingKind kind) {
  std::string name = "default", keys;
  for (const auto& [n, k] : hf_types())
    if (k == kind) name = n;
  for (const ScalingOption& o : scaling_options())
    if (belongs(o, kind)) keys += (keys.empty() ? "" : ", ") + std::string(o.key);
  return "rope_type '" + name + "', whose keys are " + (keys.empty() ? "none" : keys) +
         " (and rope_type, type, original_max_position_embeddings, rope_theta)";
}

// original_max_position_embeddings and rope_theta: the checkpoint's, or an error naming both.
static void check_model_key(const std::string& key, const Json& j, const std::string& file,
                            const ScaledModel& m) {
  const std::string where = file + ": key '" + key + "'";
  if (key == "original_max_position_embeddings") {
    if (!j.to_uint64())
      fail(where, ": expected an integer, but got ",
           j.is_number() ? j.text : json_kind_name(j.kind));
    if (static_cast<int64_t>(*j.to_uint64()) != m.train_len)
      fail(where, " is ", j.text, ", but the checkpoint's training length T0 (block_size) is ",
           m.train_len);
  } else {
    if (!j.is_number()) fail(where, ": expected a number, but got ", json_kind_name(j.kind));
    if (j.number != m.theta)
      fail(where, " is ", j.text, ", but the checkpoint's rope_theta is ", m.theta);
  }
}

RopeScaling rope_scaling_from_json(std::string_view text, const std::string& file,
                                   const ScaledModel& m) {
  const Json cfg = json_parse(text, file);  // invalid JSON: the byte offset
  if (!cfg.is_object())
    fail(file, ": expected a JSON object (an HF rope_scaling), but got ", json_kind_name(cfg.kind));
  RopeScaling sc;
  sc.train_len = m.train_len;
  sc.kind = config_kind(cfg, file);
  for (const auto& [key, value] : cfg.members) {
    if (value.is_null() || key == "rope_type" || key == "type") continue;  // null: absent
    if (key == "original_max_position_embeddings" || key == "rope_theta") {
      check_model_key(key, value, file, m);
      continue;
    }
    const ScalingOption* o = nullptr;
    for (const ScalingOption& opt : scaling_options())
      if (key == opt.key) o = &opt;
    const std::string where = file + ": key '" + key + "'";
    if (!o)
      fail(where, " is not an HF rope_scaling key poslab knows (rope_type, type, factor, ",
           "original_max_position_embeddings, rope_theta, low_freq_factor, high_freq_factor, ",
           "short_factor, long_factor, attention_factor, beta_fast, beta_slow, mscale, ",
           "mscale_all_dim, truncate)");
    if (!belongs(*o, sc.kind)) fail(where, " does not belong to ", type_keys(sc.kind));
    set_option(sc, *o, value_from_json(*o, value, where), where, m);
  }
  check_scaling(sc, Source{file}, m);
  return sc;
}

}  // namespace poslab
