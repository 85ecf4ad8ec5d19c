"""The interactive report as people see it: opened in a real headless Chromium.

The page must load without script errors; moving the time slider must recolour the links;
hovering on a link must show its hover text; a screenshot must not be blank. Skipped (with
the reason) where Debian's chromium and chromium-driver, Selenium or Plotly are missing.
"""

from __future__ import annotations

import io
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("plotly", reason="the interactive report needs Plotly (netsim[report])")
webdriver = pytest.importorskip("selenium.webdriver",
                                reason="the browser test drives Chromium with Selenium")

BROWSER = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
pytestmark = pytest.mark.skipif(
    not (Path(BROWSER).exists() and Path(DRIVER).exists()),
    reason="no headless browser: apt-get install chromium chromium-driver")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--window-size=1200,1400"]

# An all-to-all on a 3x3 mesh: the flows to far nodes drain last, so the links' loads
# change over the run (the first and the last window are coloured differently).
SCENARIO = """\
name: browser
description: an all-to-all on a 3x3 mesh
jobs:
  - kind: traffic
    name: mesh alltoall
    topology: mesh:3x3,bw=10GB/s,lat=1us
    pattern: alltoall
    size: 1MiB
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    from netsim.cli import main

    folder = tmp_path_factory.mktemp("browser")
    (folder / "s.yaml").write_text(SCENARIO)
    report = folder / "report.html"
    main(["run", str(folder / "s.yaml"), "--report", str(report)])
    options = Options()
    options.binary_location = BROWSER
    for flag in FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        driver.get(report.as_uri())
        _wait(driver, "return document.querySelectorAll('.js-plotly-plot .main-svg').length")
        yield driver, report
    finally:
        driver.quit()


def _wait(driver, script: str, timeout: float = 20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for: {script}")


# The network figure is the first plot; its link markers are the trace named "links".
_FILLS = """
var gd = document.querySelectorAll('.js-plotly-plot')[0];
var k = gd.data.findIndex(function (t) { return t.name === 'links'; });
var trace = gd.querySelector('.scatterlayer .trace' + gd._fullData[k].uid);
return Array.from(trace.querySelectorAll('path.point')).map(function (p) {
    return p.style.fill; });
"""


def test_loads_without_script_errors(page):
    driver, report = page
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    assert driver.execute_script("return typeof Plotly") == "object"   # inlined, no network
    assert "<script src=\"http" not in report.read_text()
    assert driver.execute_script("return document.querySelectorAll('.js-plotly-plot')"
                                 ".length") == 2       # the network and its busiest links


def test_the_slider_moves_and_the_links_change_colour(page):
    from selenium.webdriver.common.action_chains import ActionChains

    driver, _ = page
    before = driver.execute_script(_FILLS)
    assert len(before) == 24                            # a marker per link of mesh:3x3
    rail = driver.find_element("css selector", ".js-plotly-plot .slider-rail-touch-rect")
    ActionChains(driver).move_to_element_with_offset(
        rail, rail.size["width"] // 2 - 3, 0).click().perform()   # the last step
    _wait(driver, "return document.querySelector('.js-plotly-plot .slider-container')"
                  ".textContent.indexOf('window start') >= 0")
    after = _wait(driver, f"var f = (function () {{ {_FILLS} }})();"
                          f"return f.join() !== {before!r}.join() ? f : null;")
    assert after != before
    title = driver.execute_script(
        "return document.querySelector('.js-plotly-plot .gtitle').textContent")
    assert "window 24/24" in title


def test_hover_shows_a_links_numbers(page):
    from selenium.webdriver.common.action_chains import ActionChains

    driver, _ = page
    point = driver.execute_script("""
        var gd = document.querySelectorAll('.js-plotly-plot')[0];
        var k = gd.data.findIndex(function (t) { return t.name === 'links'; });
        return gd.querySelector('.scatterlayer .trace' + gd._fullData[k].uid)
                 .querySelector('path.point');
    """)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", point)
    ActionChains(driver).move_to_element(point).perform()
    text = _wait(driver, "var h = document.querySelector('.js-plotly-plot .hoverlayer "
                         ".hovertext'); return h ? h.textContent : null;")
    assert "->" in text and "utilisation" in text and "ops in flight" in text


def test_a_screenshot_is_not_blank(page, tmp_path):
    from matplotlib.image import imread

    driver, _ = page
    plot = driver.find_element("css selector", ".js-plotly-plot")
    pixels = imread(io.BytesIO(plot.screenshot_as_png))[..., :3]
    colours = np.unique((pixels.reshape(-1, 3) * 255).astype(np.uint8), axis=0)
    assert pixels.shape[0] > 300 and pixels.shape[1] > 300
    assert len(colours) > 50 and float(pixels.std()) > 0.05
