"""explorer.html's speed and size: the redraw after a control change on a 12-word sentence,
timed inside headless Chromium with performance.now(), and the file's size.

Usage: python bench/bench_explorer.py [--changes N] [--rounds R]
Needs Debian's chromium and playwright (both installed by scripts/test.sh). A change is timed
from setting the control to the end of the layout it causes (the event handler's redraw, then
a forced style and layout pass); each control gets R rounds of N changes and the best round's
median is printed (other processes on a shared machine only ever slow a round down), beside the
renderer's own CPU time per change (Chrome's thread-time metrics: what a machine that runs
nothing else would take). Goals: a redraw within 16 ms (one frame at 60 Hz); the file under
300 KB without Module 3's data.
"""

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from browser import launch, open_page  # noqa: E402  (the tests' launcher: chromium's flags)

SENTENCE = "the river bank by the money office at the lake of cash"  # 12 words
TIMED = """([selector, values]) => values.map(v => {
  const el = document.querySelector(selector);
  const t0 = performance.now();
  if (el.type === "checkbox") el.click(); else { el.value = String(v);
    el.dispatchEvent(new Event("input", {bubbles: true})); }
  void document.body.offsetHeight;  // style and layout, as the browser would before painting
  return performance.now() - t0;
})"""


def write_pages(folder):  # -> (page without Module 3's data, page with MiniLM's runs)
    import numpy as np

    from attention_workshop.figures import explorer
    from attention_workshop.modules.module2 import scaling_experiment
    from attention_workshop.real import load_model

    scaling = scaling_experiment()
    bare = explorer.write_explorer(folder / "bare", explorer.explorer_data(scaling))
    model = load_model("minilm", dtype=np.float64)
    runs = explorer.model_runs(model, [SENTENCE])
    real = explorer.real_data("all-MiniLM-L6-v2", runs, explorer.FLOAT64)
    return bare, explorer.write_explorer(folder / "real",
                                         explorer.explorer_data(scaling, real, SENTENCE))


def cpu_seconds(cdp):  # the renderer's main-thread CPU time in tasks so far
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return next(m["value"] for m in metrics if m["name"] == "TaskDuration")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=200, help="changes per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per control")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for sub in ("bare", "real"):
            (Path(tmp) / sub).mkdir()
        bare, real = write_pages(Path(tmp))
        driver, browser = launch()
        try:
            page = open_page(browser, real).page
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
            page.fill("#sentence-text", SENTENCE)
            assert len(page.evaluate("window.explorer.state().tokens")) == 12
            steps = [round(-3 + 0.1 * (k % 61), 1) for k in range(args.changes)]
            rows = [
                ("W_Q slider (Module 2 redraws)", 'input[data-slider="W_Q:2:0"]', steps),
                ("W_V box (Module 2 redraws)", 'input[data-cell="W_V:1:1"]', steps),
                ("causal switch (Module 2 redraws)", "#causal", steps),
                ("sentence: a word swapped (all panels)", "#sentence-text",
                 [SENTENCE if k % 2 else SENTENCE.replace("cash", "loan")
                  for k in range(args.changes)]),
                ("sentence: last word off, on (all panels)", "#sentence-text",
                 [SENTENCE if k % 2 else SENTENCE.rsplit(" ", 1)[0]
                  for k in range(args.changes)]),
                ("[S5] d slider", "#d-slider", [k % 9 for k in range(args.changes)]),
            ]
            print(f"redraw after a control change, {len(SENTENCE.split())}-word sentence, "
                  f"median of {args.changes} changes, best of {args.rounds} rounds "
                  "(goal <= 16 ms):")
            for name, selector, values in rows:
                before = cpu_seconds(cdp)
                medians = [statistics.median(page.evaluate(TIMED, [selector, values]))
                           for _ in range(args.rounds)]
                cpu = (cpu_seconds(cdp) - before) / (args.rounds * len(values)) * 1000
                print(f"  {name:42s} {min(medians):6.2f} ms  (rounds: "
                      f"{', '.join(f'{m:.1f}' for m in medians)}; CPU {cpu:.1f} ms)")
        finally:
            browser.close()
            driver.stop()
        print(f"file size without Module 3's data: {bare.stat().st_size / 1000:.1f} KB "
              "(goal < 300 KB)")
        print(f"file size with MiniLM on 3 sentences (T = 5, 5, 14): "
              f"{real.stat().st_size / 1000:.1f} KB")


if __name__ == "__main__":
    main()
