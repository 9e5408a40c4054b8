"""Notebook 00 in JupyterLab, run through the UI as a student would: Run → Run All Cells, in headless Chromium."""

import json
import re
import time

NOTEBOOK = "00_start_here.ipynb"
RUN_TIMEOUT_MS = 240_000
ERROR = re.compile(r"Traceback \(most recent call last\)|^\w*(?:Error|Exception|Interrupt)\b.*", re.M)


def test_run_all_cells_in_jupyterlab(lab, guarded, screenshots):
    base, token, root = lab
    page = guarded.page
    page.goto(f"{base}/lab/tree/{NOTEBOOK}?token={token}")
    notebook = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook")
    notebook.locator(".jp-CodeCell").first.wait_for(timeout=120_000)
    # The kernel must be up before anything runs: the toolbar's kernel status reads "Idle".
    page.get_by_text(re.compile(r"Python 3 \(ipykernel\) \| Idle")).first.wait_for(timeout=120_000)

    stored = json.loads((root / NOTEBOOK).read_text(encoding="utf-8"))
    n_code = sum(1 for c in stored["cells"] if c["cell_type"] == "code")
    assert notebook.locator(".jp-CodeCell").count() == n_code, "JupyterLab does not show every code cell"

    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

    # Done when every code cell shows an execution count, [n]:, and none is queued or running, [*]:; or, sooner,
    # when the run stopped at an exception (JupyterLab then leaves the later cells unrun).
    page.wait_for_function(
        """n => {
            const panel = '.jp-NotebookPanel:not(.lm-mod-hidden) ';
            const prompts = document.querySelectorAll(panel + '.jp-CodeCell .jp-InputPrompt');
            const ps = [...prompts].map(p => p.textContent.trim());
            const done = ps.length === n && ps.every(p => /^\\[\\d+\\]:$/.test(p));
            const stopped = !ps.includes('[*]:') && [...document.querySelectorAll(panel + '.jp-OutputArea-output')]
                .some(o => o.textContent.includes('Traceback (most recent call last)'));
            return done || stopped;
        }""",
        arg=n_code,
        timeout=RUN_TIMEOUT_MS,
        polling=1000,
    )
    page.screenshot(path=str(screenshots / "jupyterlab-00_start_here-end.png"))

    # No error output. JupyterLab renders an exception's traceback with the MIME type of stderr, which also
    # carries progress bars (cl.fit's tqdm); a traceback names its exception: "...Error: message".
    stderr = notebook.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
    errors = [t for t in stderr.all_inner_texts() if ERROR.search(t)]
    assert not errors, "error output in the UI:\n" + "\n---\n".join(errors)[:3000]
    prompts = notebook.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts()
    counts = [int(m.group()) if (m := re.search(r"\d+", p)) else None for p in prompts]
    assert counts == list(range(1, n_code + 1)), f"the cells did not run once each, in order: {counts}"
    assert notebook.locator(".jp-OutputArea-output").count() > 0, "no output at all"

    # A matplotlib figure, rendered as an image that the browser decoded.
    images = notebook.locator(".jp-RenderedImage img")
    assert images.count() >= 1, "no figure rendered"
    images.first.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 100", arg=images.first.element_handle())
    page.screenshot(path=str(screenshots / "jupyterlab-00_start_here.png"))

    # Save through the UI and read the file: every cell ran in order, no error output.
    notebook.locator(".jp-Cell").first.click()
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        saved = json.loads((root / NOTEBOOK).read_text(encoding="utf-8"))
        code = [c for c in saved["cells"] if c["cell_type"] == "code"]
        if [c["execution_count"] for c in code] == list(range(1, n_code + 1)):
            break
        time.sleep(1)
    else:
        raise AssertionError("the notebook saved from the UI does not show every cell executed once, in order")
    assert not [o for c in code for o in c["outputs"] if o["output_type"] == "error"]

    assert not guarded.external, f"JupyterLab requested other hosts: {guarded.external}"
