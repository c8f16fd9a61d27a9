"""How long the page takes to answer, measured in headless Chromium.

``python -m stoicheia_spacy.serve.measure --papyrus FILE [--out docs/serve_timing.json]
[--screenshot docs/serve.png]`` serves the default pipeline (or ``--model``) on a free loopback
port and, for each input, fills the form, presses the button and waits for the answer page;
the time from the click to the rendered results is taken ``--repeat`` times (median reported).
Inputs: a decree with one four-letter gap, and the first ``--chars`` characters of the
papyrus FILE (Leiden text, or an EpiDoc file read with its edition), as given and with one
``[.8]`` gap. Loading the pipeline is timed once, before the server starts.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from .engine import Engine

DECREE = "ἔδοξεν τῆι βουλῆι καὶ τῶι δήμωι· Κεκροπὶς ἐπρυτάνευε, [.4]ιος ἐγραμμάτευε, Εὐπείθης ἐπεστάτει."


def papyrus_text(path: Path, chars: int) -> str:
    """The first ``chars`` characters (cut at a space) of a Leiden text file or an EpiDoc edition,
    its Leiden markup removed (no gap: the gaps are the ones :func:`with_gap` adds)."""
    from ..leiden import parse_gaps

    data = path.read_bytes()
    if path.suffix.lower() == ".xml":
        from ..leiden.epidoc import read_epidoc

        text = read_epidoc(data).text
    else:
        text = data.decode("utf-8")
    text = " ".join(parse_gaps(text).text.split())
    if len(text) > chars:
        text = text[: text.rfind(" ", 0, chars + 1)]
    return text


def with_gap(text: str, width: int = 8) -> str:
    """``text`` with the letters of a middle word span replaced by one ``[.width]`` gap."""
    middle = text.find(" ", len(text) // 2) + 1
    return f"{text[:middle]}[.{width}]{text[middle + width:]}"


def answer_seconds(browser: Any, url: str, text: str) -> float:
    """Seconds from pressing the button to the answer page with its results."""
    from selenium.webdriver.common.by import By

    from .browser import submit_and_wait

    browser.get(url + "/")
    box = browser.find_element(By.ID, "text")
    browser.execute_script("arguments[0].value = arguments[1];", box, text)
    button = browser.find_element(By.ID, "run")
    start = time.perf_counter()
    submit_and_wait(browser, button)
    seconds = time.perf_counter() - start
    if not browser.find_elements(By.ID, "results"):
        raise RuntimeError(f"the page gave no results: {browser.find_element(By.ID, 'error').text}")
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m stoicheia_spacy.serve.measure", description=__doc__.split("\n\n")[0])
    parser.add_argument("--papyrus", type=Path, required=True, help="Leiden text or EpiDoc file of a papyrus")
    parser.add_argument("--chars", type=int, default=2000, help="Characters of the papyrus to paste")
    parser.add_argument("--model", default=None, help="Pipeline or checkpoint (default: the default pipeline)")
    parser.add_argument("--repeat", type=int, default=3, help="Answers timed per input (median reported)")
    parser.add_argument("--out", type=Path, default=Path("docs/serve_timing.json"))
    parser.add_argument("--screenshot", type=Path, default=None, help="Also save a PNG of the decree's page here")
    args = parser.parse_args(argv)

    from ..leiden import parse_gaps
    from .app import create_app
    from .browser import ServerThread, chromium

    papyrus = papyrus_text(args.papyrus, args.chars)
    inputs = {"one gap (decree)": DECREE, f"{len(papyrus):,}-character papyrus, no gap": papyrus,
              f"{len(papyrus):,}-character papyrus, one [.8] gap": with_gap(papyrus)}
    engine = Engine(args.model)
    start = time.perf_counter()
    nlp = engine.nlp
    load = time.perf_counter() - start
    browser = chromium()
    rows: dict[str, Any] = {}
    try:
        with ServerThread(create_app(engine)) as url:
            answer_seconds(browser, url, "ἔδοξεν τῆι βουλῆι [.3] δήμωι")  # warm-up: first forward, browser cache
            for name, text in inputs.items():
                times = [answer_seconds(browser, url, text) for _ in range(args.repeat)]
                rows[name] = {"median_s": round(statistics.median(times), 3), "runs_s": [round(t, 3) for t in times],
                              "characters": len(text), "gaps": len(parse_gaps(text).gaps)}
                print(f"{name}: median {statistics.median(times):.2f} s over {args.repeat}")
            if args.screenshot is not None:
                browser.set_window_size(1100, 2600)
                answer_seconds(browser, url, DECREE)
                args.screenshot.parent.mkdir(parents=True, exist_ok=True)
                browser.save_screenshot(str(args.screenshot))
    finally:
        browser.quit()
    report = {"what": "seconds from pressing the button to the rendered answer page, headless Chromium, "
                      f"median of {args.repeat} (one browser session, warm server)",
              "command": "python -m stoicheia_spacy.serve.measure " + " ".join(sys.argv[1:] if argv is None else argv),
              "pipeline": args.model or "default", "components": nlp.pipe_names,
              "pipeline_load_s": round(load, 2), "papyrus": args.papyrus.name, "inputs": rows,
              "machine": {"cpus": _cpus(), "load_average_1_5_15": _load(), "python": platform.python_version(),
                          "platform": platform.platform()}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"written {args.out}")


def _load() -> list[float] | None:
    """The machine's load averages at the end (timings are wall times on a shared machine)."""
    import os

    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0


if __name__ == "__main__":
    main()
