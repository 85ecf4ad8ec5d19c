"""Regenerate the figures of docs/report.md: ``python docs/figures/make_report_figures.py``
(from the repo root).

* ``heatmap-galaxy-allreduce-windows.png``: the same picture as
  ``netsim coll allreduce --topo galaxy-wh --size 64MiB --windows 6 --heatmap FILE``;
* ``report-galaxy-window-*.png``: the interactive report of ``netsim run --report FILE``
  (the default scenario) opened in headless Chromium, its galaxy-wh drawing at two steps of
  the time slider. Needs Plotly, Selenium and Debian's chromium and chromium-driver; the
  heatmap is drawn without them.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from netsim.report.heatmap import draw_time_heatmaps
from netsim.run import recording_timelines, run_collective

HERE = Path(__file__).parent
#: Slider steps shown (0-based, of the report's 24 windows): the all-reduce's first phase
#: and its last.
STEPS = (3, 20)


def galaxy_windows() -> None:
    with recording_timelines():
        run = run_collective("allreduce", "galaxy-wh", "default", "64MiB")
    draw_time_heatmaps(run.machine, run.result, HERE / "heatmap-galaxy-allreduce-windows.png",
                       windows=6, title=f"allreduce {run.algorithm}, 64 MiB, galaxy-wh")


def report_screenshots() -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    from netsim.cli import main

    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "report.html"
        main(["run", "--report", str(page)])
        options = Options()
        options.binary_location = "/usr/bin/chromium"
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update",
                     "--window-size=1150,1600", "--hide-scrollbars"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            driver.get(page.as_uri())
            time.sleep(2)
            plot = driver.find_element("css selector", ".js-plotly-plot")   # galaxy-wh
            driver.execute_script("arguments[0].scrollIntoView()", plot)
            for step in STEPS:
                # as a click on the slider's step does
                driver.execute_script(
                    "Plotly.animate(arguments[0], ['w' + arguments[1]], {mode: 'immediate',"
                    " frame: {duration: 0, redraw: true}, transition: {duration: 0}});"
                    "arguments[0].layout.sliders[0].active = arguments[1];"
                    "Plotly.relayout(arguments[0], {'sliders[0].active': arguments[1]});",
                    plot, step)
                time.sleep(1)
                plot.screenshot(str(HERE / f"report-galaxy-window-{step + 1}.png"))
        finally:
            driver.quit()


if __name__ == "__main__":
    galaxy_windows()
    if "--no-browser" not in sys.argv:
        report_screenshots()
