"""Right-sized code nodes on a real application (wingtip-saas, MIT): no node over the token
cap, members and SQL objects are exact slices of their files, types are outlines.

Before outlines and parts the largest node of wingtip-saas was ``TenantDbContext`` whole,
1,898 tokens (25 C# and 4 SQL nodes over 512); with them the largest is 510 tokens.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from excerpt.ingest.base import LoadedCorpus
from excerpt.ingest.code.source import load_code_source
from excerpt.ingest.code.text import MAX_NODE_TOKENS
from excerpt.ingest.documents.text import read_text_file
from excerpt.tokens import count_tokens

APP = "CS:Events_TenantUserApp."


@pytest.fixture(scope="module")
def wingtip(shared_data: Callable[..., Path]) -> tuple[Path, LoadedCorpus]:
    root = shared_data("code", "wingtip-saas")
    return root, load_code_source([root])


def test_no_node_is_over_the_cap(wingtip: tuple[Path, LoadedCorpus]) -> None:
    _, corpus = wingtip
    sizes = {n.id: count_tokens(n.text) for n in corpus.nodes}
    assert len(sizes) > 400
    largest = max(sizes, key=lambda k: sizes[k])
    assert sizes[largest] <= MAX_NODE_TOKENS, (largest, sizes[largest])
    parted = {k.split("~")[0] for k in sizes if "~" in k}
    assert APP + "EF.TenantsDB.TenantDbContext.OnModelCreating" in parted  # 1,539 tokens
    assert "SQL:dbo.sp_CpuLoadGenerator" in parted  # 884 tokens


def test_members_are_slices_and_types_are_outlines(wingtip: tuple[Path, LoadedCorpus]) -> None:
    root, corpus = wingtip
    files: dict[str, str] = {}
    for n in corpus.nodes:
        if n.document_id not in files:
            text, _ = read_text_file(root / n.document_id)
            assert text is not None
            files[n.document_id] = text
        if n.metadata.get("member", True):  # SQL nodes have no member field
            assert n.text == files[n.document_id][n.start : n.end], n.id
        else:
            assert n.start < n.end <= len(files[n.document_id]), n.id
    nodes = {n.id: n for n in corpus.nodes}
    context = nodes[APP + "EF.TenantsDB.TenantDbContext"].text
    assert "public partial class TenantDbContext : DbContext" in context
    assert "public virtual DbSet<Customers> Customers { get; set; }" in context
    assert "protected override void OnModelCreating(ModelBuilder modelBuilder) { … }" in context
    assert "HasConstraintName" not in context
    startup = nodes[APP + "Startup"].text
    assert "public void ConfigureServices(IServiceCollection services) { … }" in startup
    assert "private ICatalogRepository _catalogRepository;" in startup
    services = nodes[APP + "Startup.ConfigureServices"].text
    assert "services.AddTransient<ITenantRepository, TenantRepository>();" in services
