"""check.py — the explorer (docs/explorer/) in headless Chromium against `poslab eval`.

    python3 tests/explorer/check.py PATH/TO/poslab SCREENSHOT_DIR

Serves docs/explorer/ on 127.0.0.1 (a free port), opens it in Debian's Chromium (browser.py:
the DevTools protocol over a pipe), lets every view compute, then drives the views' own
controls and reads back what the page computed and shows (each panel's data-mean, the full
double the worker returned). Each is compared with `poslab eval --json` on the same window (the
first val window of L characters: the page's data/val.bin is the start of the val split):

  view 1 (read)           every scheme at L = 256 and 1024
  view 2 (past T0)        every scheme at L = 4096, the longest window the page offers
  view 3 (interventions)  every scheme at L = 512 with --attention-window 64, with
                          --position-offset 1024, with --logit-scale log; RoPE at L = 1024
                          with every --rope-scaling the page offers, at the default factor
                          and at --factor 2
  view 7 (generate)       RoPE, greedy, 60 characters: the same text as poslab generate

to |page - eval| <= 1e-5 nats (the page computes in WebAssembly with its own SIMD kernel, the
CLI with AVX: the products round differently; the differences seen are about 1e-7).
It also checks view 6 (NoPE without a mask gives the same outputs for 我打你 and 你打我, RoPE
does not) and that bad input gets a message: an empty text, a character outside the
vocabulary, a learned model asked past its table. Then one PNG per view into SCREENSHOT_DIR,
and the speed of the page's windows (ms per model at 1024 and 4096) and the worker's memory.
Exit 0 when every check passes, 1 otherwise.
"""
import functools
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SITE = os.path.join(ROOT, "docs", "explorer")
MODELS = os.path.join(ROOT, "docs", "results", "models")
SCHEMES = ["none", "learned", "sinusoidal", "rope", "alibi", "t5"]
SCALINGS = ["linear", "ntk", "dynamic", "yarn", "llama3"]
TOL = 1e-5
sys.path.insert(0, HERE)
from browser import Browser  # noqa: E402


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = dict(http.server.SimpleHTTPRequestHandler.extensions_map,
                          **{".wasm": "application/wasm"})

    def log_message(self, *args):
        pass


def serve(directory):
    handler = functools.partial(Handler, directory=directory)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Checks:
    def __init__(self, poslab, data):
        self.poslab, self.data, self.failures, self.count = poslab, data, [], 0

    def cli_eval(self, pe, L, flags=()):
        cmd = [self.poslab, "eval", "--ckpt", os.path.join(MODELS, pe + ".safetensors"),
               "--data", self.data, "--len", str(L), "--windows", "1", "--json", *flags]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(" ".join(cmd) + ": " + out.stderr.strip())
        return json.loads(out.stdout)["loss"]

    def compare(self, what, page, pe, L, flags=()):
        self.count += 1
        cli = self.cli_eval(pe, L, flags)
        ok = page is not None and abs(page - cli) <= TOL
        print("%-4s %-58s page %.10f  poslab eval %.10f  diff %.1e" %
              ("ok" if ok else "FAIL", what, page if page is not None else float("nan"), cli,
               abs(page - cli) if page is not None else float("inf")))
        if not ok:
            self.failures.append(what)

    def expect(self, what, cond, detail=""):
        self.count += 1
        print("%-4s %s %s" % ("ok" if cond else "FAIL", what, detail))
        if not cond:
            self.failures.append(what)


# The page's own controls, set and run; returns when the view has drawn.
SET_AND_RUN = """
(async (view, values) => {
  for (const [id, v] of Object.entries(values)) {
    const e = document.getElementById(id);
    if (e.type === "checkbox") e.checked = v; else e.value = v;
  }
  await PX.views[view].run();
  return true;
})"""
# data-mean of each panel or row of a view: {scheme: mean}
MEANS = """
((sel) => Object.fromEntries(Array.from(document.querySelectorAll(sel + " [data-scheme][data-mean]"))
  .map((e) => [e.dataset.scheme, +e.dataset.mean])))"""


def run_views(b, c):
    # view 1: every scheme at two lengths
    for L in (256, 1024):
        b.evaluate(SET_AND_RUN + "('read', %s)" % json.dumps(
            {"read-source": "val", "read-start": "0", "read-len": str(L)}))
        means = b.evaluate(MEANS + "('#read-panels')")
        for pe in SCHEMES:
            c.compare("read L=%d %s" % (L, pe), means.get(pe), pe, L)
    # view 2: the longest window
    b.evaluate(SET_AND_RUN + "('length', {'length-slider': '6', 'length-sliding': true})")
    means = b.evaluate(MEANS + "('#length-table')")
    for pe in SCHEMES:
        c.compare("past T0 L=4096 %s" % pe, means.get(pe), pe, 4096)
    # view 3: each intervention on every scheme, each scaling on RoPE
    plain = {"iv-window": "0", "iv-offset": "0", "iv-log": False, "iv-scaling": "none", "iv-factor": "0"}
    cases = [("attention window 64", 512, {"iv-window": "64"}, ["--attention-window", "64"]),
             ("position offset 1024", 512, {"iv-offset": "1024"}, ["--position-offset", "1024"]),
             ("log logit scale", 512, {"iv-log": True}, ["--logit-scale", "log"])]
    for what, L, values, flags in cases:
        b.evaluate(SET_AND_RUN + "('interventions', %s)" % json.dumps(dict(plain, **values, **{"iv-len": str(L)})))
        means = b.evaluate(MEANS + "('#iv-table')")
        for pe in SCHEMES:
            c.compare("%s L=%d %s" % (what, L, pe), means.get(pe), pe, L, flags)
    for kind in SCALINGS:
        for factor in ("0", "2"):
            b.evaluate(SET_AND_RUN + "('interventions', %s)" % json.dumps(
                dict(plain, **{"iv-len": "1024", "iv-scaling": kind, "iv-factor": factor})))
            means = b.evaluate(MEANS + "('#iv-table')")
            flags = ["--rope-scaling", kind] + (["--factor", factor] if factor != "0" else [])
            c.compare("rope %s factor %s L=1024" % (kind, factor if factor != "0" else "auto"),
                      means.get("rope"), "rope", 1024, flags)
            others = b.evaluate("Object.keys(%s('#iv-table')).filter((n) => n !== 'rope')" % MEANS)
            c.expect("  %s offered to RoPE only" % kind, others == [], str(others))


def run_generate(b, c):
    prompt = "def fibonacci(n):\n    "
    b.evaluate(SET_AND_RUN + "('generate', %s)" % json.dumps(
        {"gen-prompt": prompt, "gen-tokens": "60", "gen-temp": "0", "gen-seed": "0"}))
    page = b.evaluate("PX.views.generate.result.rope")
    out = subprocess.run([c.poslab, "generate", "--ckpt", os.path.join(MODELS, "rope.safetensors"),
                          "--prompt", prompt, "--tokens", "60", "--temperature", "0"],
                         capture_output=True, text=True, check=True).stdout
    cli = out[len(prompt):].rstrip("\n")
    c.expect("generate rope greedy 60 characters = poslab generate", page == cli,
             "\n     page: %r\n     cli:  %r" % (page, cli))


def run_bad_inputs(b, c):
    order = b.evaluate("PX.views.order.result")
    c.expect("我打你/你打我: NoPE without a mask, same outputs", order["none"] < 1e-5, str(order["none"]))
    c.expect("我打你/你打我: RoPE, different outputs", order["rope"] > 1e-4, str(order["rope"]))
    b.evaluate(SET_AND_RUN + "('read', {'read-source': 'typed', 'read-text': ''})")
    c.expect("empty text: a message", "至少" in b.evaluate("document.getElementById('read-msg').textContent"))
    b.evaluate(SET_AND_RUN + "('read', {'read-source': 'typed', 'read-text': 'x = 你好'})")
    msg = b.evaluate("document.getElementById('read-msg').textContent")
    marked = b.evaluate("document.querySelectorAll('#read-panels .oov').length")
    c.expect("characters outside the vocabulary: shown and explained", "你" in msg and marked == 12,
             "(%d panels mark it)" % marked)
    bad = b.evaluate("PX.call('load', {name: 'bad', url: 'data/vocab.json'}).then(() => '', (e) => e.message)")
    c.expect("a model file that fails to load: the reader's message", "safetensors" in bad or "header" in bad, repr(bad))
    b.evaluate(SET_AND_RUN + "('interventions', {'iv-len': '2048', 'iv-offset': '3072', 'iv-window': '0', 'iv-log': false, 'iv-scaling': 'none'})")
    note = b.evaluate("document.querySelector('#iv-table [data-scheme=learned]').textContent")
    c.expect("learned past its table: the error in its row", "max_len" in note, repr(note[-120:]))


def screenshots(b, out):
    os.makedirs(out, exist_ok=True)
    b.evaluate(SET_AND_RUN + "('read', {'read-source': 'val', 'read-start': '0', 'read-len': '256'})")
    b.evaluate(SET_AND_RUN + "('length', {'length-slider': '5'})")
    b.evaluate(SET_AND_RUN + "('interventions', {'iv-len': '2048', 'iv-offset': '0', 'iv-scaling': 'yarn', 'iv-factor': '0'})")
    b.evaluate("PX.views.inspect.run()")
    b.evaluate(SET_AND_RUN + "('generate', {'gen-tokens': '200', 'gen-temp': '0.8', 'gen-seed': '0'})")
    for view in ["read", "length", "interventions", "inspect", "rope", "order", "generate"]:
        b.screenshot(os.path.join(out, view + ".png"), "#view-" + view)
    b.evaluate("PX.setLang('en'); PX.views.read.run()")
    b.screenshot(os.path.join(out, "read.en.png"), "#view-read")
    b.evaluate("PX.setLang('zh')")
    print("screenshots: %s/{read,length,interventions,inspect,rope,order,generate}.png, read.en.png" % out)


def speed(b):
    """ms per model for one window of 1024 and of 4096 (a fresh evaluation each), and memory."""
    r = b.evaluate("""(async () => {
      const out = {};
      for (const L of [1024, 4096]) {
        const ids = PX.valWindow(1, L + 1);  // not the cached window at 0
        out[L] = {};
        for (const n of PX.loaded()) out[L][n] = Math.round((await PX.call('eval', { name: n, ids })).ms);
      }
      out.memory = await PX.call('memory');
      return out; })()""", timeout=600)
    for L in ("1024", "4096"):
        print("speed: one window of %s characters, ms per model: %s" % (L, r[L]))
    m = r["memory"]
    print("memory: WebAssembly memory %.0f MiB, tensor allocator peak %.0f MiB (6 models loaded)"
          % (m["wasm"] / 2**20, m["peak"] / 2**20))


def main():
    poslab = os.path.abspath(sys.argv[1])
    shots = sys.argv[2] if len(sys.argv) > 2 else None
    for f in ("poslab.js", "poslab.wasm", "models/rope.safetensors"):
        if not os.path.exists(os.path.join(SITE, f)):
            sys.exit("check.py: docs/explorer/%s is missing: run scripts/explorer.sh build first" % f)
    data = tempfile.mkdtemp(prefix="poslab-explorer-")
    for f in ("val.bin", "vocab.json"):
        os.symlink(os.path.join(SITE, "data", f), os.path.join(data, f))
    server = serve(SITE)
    url = "http://127.0.0.1:%d/index.html" % server.server_address[1]
    c = Checks(poslab, data)
    t0 = time.time()
    with Browser(width=1280, height=900) as b:
        b.open(url)
        status = b.evaluate("""(async () => { while (!PX.ready) await new Promise(r => setTimeout(r, 50));
          for (const v of Object.values(PX.views)) if (v.pending) await v.pending;
          return [PX.loaded(), document.getElementById('status').textContent]; })()""")
        c.expect("every model loads", status[0] == SCHEMES, str(status))
        run_views(b, c)
        run_generate(b, c)
        run_bad_inputs(b, c)
        speed(b)
        if shots:
            screenshots(b, shots)
    server.shutdown()
    print("%d checks, %d failed, %.0f s" % (c.count, len(c.failures), time.time() - t0))
    for f in c.failures:
        print("FAILED: " + f)
    sys.exit(1 if c.failures else 0)


if __name__ == "__main__":
    main()
