"""The web UI's upload and folder sync (issue 32), in headless Chromium against a real `excerpt
serve` process: `GET /v1/whoami` says a key's role, and the upload panel shows only for keys
that may ingest; files chosen with the keyboard or dropped go to `POST /v1/ingest` with a
progress bar each and their result (snapshot, passages) or the server's error in place, and
become searchable; a folder chosen in the page is zipped there (static/zip.js, checked with
Python's zipfile) and synced through `POST /v1/sync`, its per-file report shown; the picker is
filled again after each. The panel is looked at (tests.a11y.looked_at: 1280/390 px light, 360
px dark, axe)."""

from __future__ import annotations

import base64
import json
import urllib.parse
import zipfile
import zlib
from collections.abc import Callable, Iterator
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from tests.a11y import looked_at
from tests.browser import HANDBOOK, watched
from tests.http import add_keys, call, excerpt_serve

from excerpt.edge.uploads import MAX_UPLOAD


class Served:
    """The served home: its URL, its folder, and a reader's (ana), an ingester's (ivy), an
    admin's (root) and a revoked (eve) key."""

    def __init__(self, url: str, home: Path, keys: dict[str, str]) -> None:
        self.url, self.home, self.keys = url, home, keys


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory,
         free_port: Callable[[], int]) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("web-ui-upload") / "home"
    keys = add_keys(home, [("ana",), ("ivy", "--role", "ingester"), ("root", "--role", "admin"),
                           ("eve", "--role", "ingester")], revoke=("eve",))
    with excerpt_serve(["--home", str(home)], free_port()) as url:
        # one collection to start with, uploaded (the server loads what an import needs once)
        page = (HANDBOOK / "02-search.md").read_bytes()
        status, body = call(f"{url}/v1/ingest?filename=search.md&collection=handbook"
                            "&embedder=none", keys["root"], page, method="POST")
        assert status == 200, body
        yield Served(url, home, keys)


@pytest.fixture
def ui(page: Any, site: Served) -> Iterator[Any]:
    """The page, failing the test on a console error or a request that leaves the server."""
    with watched(page, site.url, lambda e: "status of 4" in e):  # refusals the test asks for
        yield page


def signed_in(page: Any, site: Served, who: str) -> None:
    """``who``'s key given to the page, its collections loaded and its rights asked."""
    page.goto(site.url + "/")
    page.fill("#key", site.keys[who])
    page.dispatch_event("#key", "change")
    page.wait_for_selector("#upload[data-may-ingest]", state="attached")
    if page.get_attribute("#upload", "data-may-ingest") == "yes":  # a one-line disclosure
        assert page.get_attribute("#upload-box", "open") is None
        page.focus("#upload-box > summary")  # opened by keyboard
        page.keyboard.press("Enter")
        assert page.locator("#upload-drop").is_visible()


def rows(page: Any) -> list[dict[str, str]]:
    """Each upload row: its name, state (waiting, zipping, sending, working, done, failed),
    what it says and its report's lines."""
    return list(page.locator("#upload-list > li").evaluate_all("""lis => lis.map(li => ({
        name: li.querySelector('.upload-name').textContent, state: li.dataset.state,
        says: li.querySelector('.upload-state').textContent,
        report: [...li.querySelectorAll('.upload-report li')].map(r => r.textContent)}))"""))


def settled(page: Any, count: int) -> list[dict[str, str]]:
    """The rows once ``count`` of them are done or failed and the picker is filled again."""
    page.wait_for_function(f"""document.querySelectorAll(
        '#upload-list > li:is([data-state=done], [data-state=failed])').length === {count}""")
    page.wait_for_selector("#collection[aria-busy=false]", state="attached")
    return rows(page)


def watch_states(page: Any) -> None:
    """Records every state each row passes through (window.seen: name -> [states]) and the
    largest progress value shown while sending, to prove the bars moved."""
    page.evaluate("""() => {
      window.seen = {};
      new MutationObserver((records) => records.forEach((r) => {
        const li = r.target.closest && r.target.closest('#upload-list > li');
        if (!li) return;
        const name = li.querySelector('.upload-name').textContent;
        const states = (window.seen[name] = window.seen[name] || []);
        if (states[states.length - 1] !== li.dataset.state) states.push(li.dataset.state);
        const bar = li.querySelector('progress');
        if (li.dataset.state === 'sending') window.seen[name + ' max'] = Math.max(
          window.seen[name + ' max'] || 0, bar.value);
      })).observe(document.getElementById('upload-list'),
        {subtree: true, childList: true, attributes: true});
    }""")


def drop(page: Any, files: dict[str, str]) -> None:
    """A drop of ``files`` (name -> text) onto the drop zone, as a DataTransfer of Files; the
    panel closed first, then opened by the files dragged over the page."""
    page.evaluate("""(files) => {
      const transfer = new DataTransfer();
      Object.entries(files).forEach(([name, body]) =>
        transfer.items.add(new File([body], name, {type: 'text/markdown'})));
      document.getElementById('upload-box').open = false;
      document.body.dispatchEvent(new DragEvent('dragenter', {dataTransfer: transfer,
                                                               bubbles: true}));
      if (!document.getElementById('upload-box').open) throw new Error('not opened by a drag');
      const zone = document.getElementById('upload-drop');
      for (const type of ['dragenter', 'dragover', 'drop'])
        zone.dispatchEvent(new DragEvent(type, {dataTransfer: transfer, bubbles: true,
                                                cancelable: true}));
    }""", files)


def sources(site: Served, collection: str) -> list[str]:
    status, listing = call(f"{site.url}/v1/snapshots?collection={collection}",
                           site.keys["ivy"])
    assert status == 200, listing
    return sorted({s["source"] for s in listing["snapshots"] if not s["retired"]})


# -- who may ingest -------------------------------------------------------------------------------

def test_whoami_says_the_keys_role_and_nothing_else(site: Served) -> None:
    for who, role, may in (("ana", "reader", False), ("ivy", "ingester", True),
                           ("root", "admin", True)):
        status, body = call(f"{site.url}/v1/whoami?role=admin", site.keys[who])
        assert (status, body) == (200, {"role": role, "may_ingest": may})
    for key in (None, "exk_unknown", site.keys["eve"]):  # none, unknown, revoked
        status, body = call(f"{site.url}/v1/whoami", key)
        assert (status, body["kind"]) == (401, "unauthorized")


def test_a_readers_key_sees_no_upload_panel(ui: Any, site: Served) -> None:
    sent: list[str] = []
    ui.on("request", lambda r: sent.append(urllib.parse.urlparse(r.url).path))
    signed_in(ui, site, "ivy")
    assert ui.locator("#upload").is_visible()
    assert ui.input_value("#upload-collection") == "handbook"  # the picked collection
    signed_in(ui, site, "ana")
    assert ui.get_attribute("#upload", "data-may-ingest") == "no"
    assert ui.locator("#upload").is_hidden() and ui.locator("#upload-list > li").count() == 0
    assert not any(p.startswith(("/v1/ingest", "/v1/sync")) for p in sent)
    ui.click("#sign-out")  # no key: no panel
    ui.wait_for_selector("#upload:not([data-may-ingest])", state="attached")
    assert ui.locator("#upload").is_hidden()


# -- files ----------------------------------------------------------------------------------------

def test_files_chosen_by_keyboard_and_dropped_become_searchable(
        ui: Any, site: Served, tmp_path: Path) -> None:
    # file choosers intercepted from the start: Playwright turns interception on without
    # waiting for the browser, so one turned on just before the key press can come too late
    ui.on("filechooser", lambda _: None)
    signed_in(ui, site, "ivy")
    ui.fill("#upload-collection", "lighthouse")  # a new collection
    watch_states(ui)
    keeper = tmp_path / "keeper.md"
    keeper.write_text("# The keeper\n\nThe lighthouse keeper trims the wick at dusk.\n" * 400,
                      "utf-8")  # ~20 KB: progress events while it is sent
    ui.focus("#upload-choose-files")
    with ui.expect_file_chooser() as chooser:
        ui.keyboard.press("Enter")
    assert chooser.value.is_multiple()
    chooser.value.set_files(str(keeper))
    drop(ui, {"gulls.md": "# Gulls\n\nHerring gulls circle the foghorn at the breakwater."})
    done = settled(ui, 2)
    assert [(r["name"], r["state"]) for r in done] == [("keeper.md", "done"), ("gulls.md", "done")]
    assert all(r["says"].startswith("snapshot ") and "passage" in r["says"] for r in done), done
    seen = ui.evaluate("window.seen")
    assert seen["keeper.md"][-3:] == ["sending", "working", "done"], seen
    assert seen["keeper.md max"] == 1, seen  # the bar reached the end
    assert ui.input_value("#collection") == "lighthouse"  # the picker filled again, and picked
    assert sources(site, "lighthouse") == ["upload:gulls.md", "upload:keeper.md"]
    _, listing = call(f"{site.url}/v1/snapshots?collection=lighthouse", site.keys["ivy"])
    snapshots = {s["source"]: s["snapshot_id"] for s in listing["snapshots"]}
    shown = ui.locator("#upload-list > li").evaluate_all("l => l.map(li => li.dataset.snapshot)")
    assert shown == [snapshots["upload:keeper.md"], snapshots["upload:gulls.md"]]
    assert done[0]["says"].startswith(f"snapshot {shown[0][:12]} · ")
    ui.select_option("#mode", "bm25")
    ui.fill("#query", "foghorn breakwater")
    ui.click("#search-button")
    ui.wait_for_selector("#hits:not([hidden])")
    assert "foghorn" in ui.inner_text("#hit-list")
    drop(ui, {"gulls.md": "# Gulls\n\nHerring gulls circle the foghorn at the breakwater."})
    assert settled(ui, 3)[-1]["says"].startswith("unchanged: snapshot ")


def test_a_bad_empty_or_too_big_file_shows_the_servers_error_in_place(
        ui: Any, site: Served, tmp_path: Path) -> None:
    signed_in(ui, site, "ivy")
    ui.fill("#upload-collection", "rejects")
    binary = tmp_path / "photo.txt"
    binary.write_bytes(b"\x89PNG\x00\x00\x01binary")
    empty = tmp_path / "empty.md"
    empty.write_bytes(b"")
    big = tmp_path / "big.txt"
    with big.open("wb") as sparse:  # one byte over the limit, and no disk space taken
        sparse.truncate(MAX_UPLOAD + 1)
    ui.set_input_files("#upload-files", [str(binary), str(empty), str(big)])
    done = settled(ui, 3)
    assert [r["state"] for r in done] == ["failed"] * 3, done
    assert "binary file (NUL byte at offset 4)" in done[0]["says"]
    assert "upload:photo.txt" in done[0]["says"]
    assert done[1]["says"] == "upload:empty.md: the upload is empty: send the file as the " \
        "request body"
    assert f"over {MAX_UPLOAD} bytes" in done[2]["says"]  # 413, before the body is read
    assert ui.text_content("#upload-said") == f"big.txt: {done[2]['says']}"  # heard, once
    assert str(site.home) not in json.dumps(done)
    looked_at(ui, tmp_path, "upload-failed")


# -- folders --------------------------------------------------------------------------------------

def test_a_folder_syncs_with_a_report_per_file_and_again_after_a_change(
        ui: Any, site: Served, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "river.md").write_text("# River\n\nThe river runs past the old stone mill.", "utf-8")
    (notes / "sub" / "harbor.md").write_text("# Harbor\n\nA lantern burns all night.", "utf-8")
    (notes / "café 한글.md").write_text("# Café\n\nViolet flowers by the orchard.", "utf-8")
    (notes / ".draft.md").write_text("# Draft\n\nnot synced", "utf-8")
    signed_in(ui, site, "ivy")
    ui.fill("#upload-collection", "notes")
    ui.set_input_files("#upload-folder", str(notes))
    first = settled(ui, 1)[0]
    assert (first["name"], first["state"]) == ("notes/", "done"), first
    assert first["says"].startswith("3 added, 0 changed, 0 unchanged, 0 deleted, 0 failed")
    assert first["report"] == ["added café 한글.md, river.md, sub/harbor.md"]
    assert "(1 hidden left out)" in ui.inner_text("#upload-list .meta")
    assert sources(site, "notes") == ["sync:notes/café 한글.md", "sync:notes/river.md",
                                      "sync:notes/sub/harbor.md"]
    assert ui.input_value("#collection") == "notes"
    looked_at(ui, tmp_path, "upload-synced")
    (notes / "river.md").write_text("# River\n\nThe river floods the copper canyon.", "utf-8")
    (notes / "sub" / "harbor.md").unlink()
    ui.set_input_files("#upload-folder", str(notes))
    second = settled(ui, 2)[1]
    assert second["says"].startswith("0 added, 1 changed, 1 unchanged, 1 deleted, 0 failed")
    assert second["report"] == ["changed river.md", "deleted sub/harbor.md"]
    assert sources(site, "notes") == ["sync:notes/café 한글.md", "sync:notes/river.md"]


ZIPPED = """async (files) => {
  const { zip, crc32 } = await import('/static/zip.js');
  const blob = await zip(files.map(([path, b64, time]) => ({
    path, data: new Blob([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))]),
    date: new Date(time)})));
  const bytes = new Uint8Array(await blob.arrayBuffer());
  let out = '';
  bytes.forEach((b) => { out += String.fromCharCode(b); });
  return {zip: btoa(out), crc: crc32(new TextEncoder().encode('The quick brown fox'))};
}"""


def test_the_pages_zip_reads_back_with_pythons_zipfile(ui: Any, site: Served) -> None:
    ui.goto(site.url + "/")
    members = {"notes/a.md": b"# A\n\nalpha", "notes/sub/bé 한글.md": "한글".encode(),
               "notes/bin.dat": bytes(range(256)) * 1200, "notes/empty.txt": b""}
    sent = [[name, base64.b64encode(data).decode(), "2024-05-06T07:08:10"]
            for name, data in members.items()]
    result = ui.evaluate(ZIPPED, sent)
    assert result["crc"] == zlib.crc32(b"The quick brown fox")
    with zipfile.ZipFile(BytesIO(base64.b64decode(result["zip"]))) as archive:
        assert archive.testzip() is None  # every member's CRC-32 checks
        infos = archive.infolist()
        assert [i.filename for i in infos] == list(members)
        for info in infos:
            assert archive.read(info) == members[info.filename]
            assert info.compress_type == zipfile.ZIP_STORED and info.flag_bits & 0x800
            assert info.date_time == (2024, 5, 6, 7, 8, 10)


def test_a_dropped_folder_is_read_batch_by_batch(ui: Any, site: Served) -> None:
    """A dropped folder's entries (webkitGetAsEntry) come from readEntries in batches until an
    empty one: every file of every batch and subfolder is read, each path under the folder's
    name. The entries here are stand-ins with the FileSystemEntry API's shape (a synthetic drop
    cannot carry a folder)."""
    ui.goto(site.url + "/")
    paths = ui.evaluate("""async () => {
      const { entryFiles } = await import('/static/upload.js');
      const file = (name) => ({ isFile: true, name, file: (ok) => ok(new File(['x'], name)) });
      const folder = (name, children) => ({ isFile: false, isDirectory: true, name,
        createReader: () => { let at = 0; return { readEntries: (ok) => setTimeout(() => {
          ok(children.slice(at, at + 2)); at += 2; }) }; } });
      const tree = folder('top', [file('a'), file('b'), folder('sub', [file('c')]), file('d'),
                                  file('e')]);
      return (await entryFiles(tree)).map((f) => f.path);
    }""")
    assert paths == ["top/a", "top/b", "top/sub/c", "top/d", "top/e"]
