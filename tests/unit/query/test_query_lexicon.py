"""The lexicon is data: a user file replaces the packaged one; bad files are refused clearly."""

from __future__ import annotations

from pathlib import Path

import pytest

from excerpt.errors import InputError
from excerpt.query.entities import EntityRecognizer, EntityType
from excerpt.query.expansion import MultiStageExpander
from excerpt.query.lexicon import load_lexicon
from excerpt.query.topk import select_top_k

ENGLISH = """
language: en
categories:
  procedure: {keywords: [apply, application], expansions: [form, deadline]}
  benefit: {keywords: [grant, stipend], expansions: [funding]}
topics: [sabbatical]
synonyms:
  sabbatical: [research leave, study leave]
hypernyms: {sabbatical: faculty leave, faculty leave: personnel}
procedure_terms: [form, office]
patterns:
  section: 'Article \\d+'
  regulation: '[A-Z][a-z]+ (?:Policy|Regulations)'
question_markers: [how, what, "?"]
conjunctions: [and also]
"""


def test_another_institution_in_another_language(tmp_path: Path) -> None:
    path = tmp_path / "lexicon.yaml"
    path.write_text(ENGLISH)
    lexicon = load_lexicon(path)
    recognizer = EntityRecognizer(lexicon)
    found = {(e.text, e.entity_type) for e in recognizer.recognize("apply for a sabbatical grant")}
    assert found == {("apply", EntityType.PROCEDURE), ("sabbatical", EntityType.TOPIC),
                     ("grant", EntityType.BENEFIT)}
    result = MultiStageExpander(recognizer).expand("sabbatical application")
    assert result.stage1_synonyms == ["research leave", "study leave"]
    assert result.stage2_hypernyms == ["faculty leave", "personnel"]
    assert MultiStageExpander(recognizer).expand("Leave Policy Article 4").formal
    assert select_top_k("sabbatical", [], lexicon).k == 5


@pytest.mark.parametrize(("text", "message"), [
    ("categories: {procedure: {keywords: apply}}", "must be a list of strings"),
    ("patterns: {section: '(unclosed'}", "not a valid regex"),
    ("- just\n- a list\n", "mapping at the top level"),
    ("a: [unclosed", "not valid YAML"),
    ("categories: {procedure: {keywords: [On, apply]}}", "quote words"),
    ("plain_words: {when: [a]}", "must be a list of rules"),
    ("plain_words: [[a, b]]", "rule 1 must be a mapping"),
    ("plain_words: [{when: [a]}]", "needs at least one word"),
    ("plain_words: [{when: [a], terms: [b], because: [c]}]", "unknown field 'because'"),
    ("plain_words: [{when: a, terms: [b]}]", "when must be a list of strings"),
])
def test_bad_lexicons(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        load_lexicon(path)


def test_missing_lexicon_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        load_lexicon(tmp_path / "nope.yaml")


def test_unknown_category_name_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text("categories: {weather: {keywords: [rain]}}")
    with pytest.raises(InputError, match="unknown category 'weather'"):
        load_lexicon(path)
