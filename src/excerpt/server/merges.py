"""Segments merged in the background of ``excerpt serve`` (issue 30).

A server that takes many small imports (``POST /v1/ingest`` of single files, syncs from
other machines) gathers small segments between syncs. Every ``merge_interval_s`` seconds a
daemon thread of the serving process merges each collection whose segments the policy says
should merge (store/tiers.py), holding the collection's sync lock: a collection being synced
is skipped this round (its sync merges when it ends). Queries go on meanwhile: a merge moves
rows in one transaction and readers see it at their next query (store/compaction.py).
"""

from __future__ import annotations

import logging
import threading

from excerpt.engine import Engine
from excerpt.errors import BusyError, ExcerptError
from excerpt.sync import merge_collection

log = logging.getLogger(__name__)


class BackgroundMerges:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.interval_s = float(engine.settings.merge_interval_s)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start merging every ``merge_interval_s`` (nothing with 0 or ``merge_factor`` 0)."""
        if self.interval_s <= 0 or not self.engine.settings.merge_factor:
            return
        self._thread = threading.Thread(target=self._loop, name="excerpt-merges", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.run_once()
            except ExcerptError as exc:  # logged, tried again next round
                log.warning("excerpt: background merge failed: %s", exc)
            except Exception:  # a disk full, say: the thread must not die silently
                log.exception("excerpt: background merge failed")

    def run_once(self) -> dict[str, int]:
        """One round over every collection; the merges run per collection (busy: skipped)."""
        store, settings = self.engine.store, self.engine.settings
        done: dict[str, int] = {}
        for name in store.collections():
            try:
                with store.sync_lock(name, wait=False):
                    done[name] = merge_collection(store, settings, name)
            except BusyError:
                continue  # a sync holds it, and merges when it ends
        return done
