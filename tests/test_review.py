"""The human-review file round-trips: export, decide, import, rebuild, export again."""

import csv
import hashlib
import subprocess
import sys

import pytest

from gramagents.errors import InputError
from gramagents.workflow.build import import_review

from .test_workflow import build


def read_rows(path):
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def write_rows(path, rows):
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_review_file_round_trips(tmp_path):
    result = build(tmp_path)
    folder = tmp_path / "build"
    review = folder / "review.csv"
    rows = read_rows(review)
    by_id = {r["instance_id"]: r for r in rows}
    flagged = [r for r in rows if r["agent_status"] in ("rejected", "failed")]
    generated = [i for i in result.instances if i.origin == "agent"]
    assert len(flagged) == sum(i.status != "accepted" for i in generated)
    assert len(rows) - len(flagged) == 10  # the sample of accepted ones
    assert by_id["E101/ex/0/rw"]["agent_verdicts"].startswith("instance-backcheck: fail")

    accepted_sample = next(
        r for r in rows if r["agent_status"] == "accepted" and r["kind"] == "example"
    )
    by_id["E101/ex/0/rw"].update(decision="accept", reviewer="li", comment="the modal is there")
    accepted_sample.update(decision="reject", comment="unnatural")
    by_id["E101/ex/1/rw"].update(decision="edit", edited_sentence="My cousin can juggle.")
    write_rows(review, rows)

    assert subprocess.run(
        [
            sys.executable,
            "-m",
            "gramagents",
            "review",
            str(folder),
            str(review),
            "--reviewer",
            "wang",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.startswith("applied 1 accept, 1 reject, 1 edit")

    rebuilt = import_review(folder, review)  # importing the re-exported file changes nothing
    instances = {i.id: i for i in rebuilt.instances}
    accepted = instances["E101/ex/0/rw"]
    human = accepted.provenance.checks[-1]
    assert accepted.status == "accepted" and (human.check, human.decided_by) == (
        "human-review",
        "li",
    )
    assert instances[accepted_sample["instance_id"]].status == "rejected"
    assert instances[accepted_sample["instance_id"]].provenance.checks[-1].decided_by == "wang"
    edited = instances["E101/ex/1/rw"]
    assert edited.text == "My cousin can juggle." and edited.status == "accepted"
    assert edited.provenance.checks[-1].details["edited_from"].startswith("Rewritten (E101)")

    items = {i.id: i for i in rebuilt.items}
    assert items["SINGLE-T/E101/ex/0/rw"].prompt.vars["sentence"].startswith("Rewritten (E101)")
    assert items["SINGLE-T/E101/ex/1/rw"].prompt.vars["sentence"] == "My cousin can juggle."
    source_of_rejected = instances[accepted_sample["instance_id"]].replaces
    assert f"SINGLE-T/{source_of_rejected}" in items

    again = {r["instance_id"]: r for r in read_rows(review)}
    assert (
        again["E101/ex/0/rw"]["decision"] == "accept" and again["E101/ex/0/rw"]["reviewer"] == "li"
    )
    assert again["E101/ex/1/rw"]["decision"] == "edit"
    assert again["E101/ex/1/rw"]["edited_sentence"] == "My cousin can juggle."
    assert again[accepted_sample["instance_id"]]["decision"] == "reject"
    before = digest(folder / "dataset.jsonl")
    import_review(folder, review)
    assert digest(folder / "dataset.jsonl") == before
    assert rebuilt.manifest.review["decisions"] == {"accept": 1, "reject": 1, "edit": 1}


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"decision": "maybe"}, "decision", "accept, reject or edit"),
        ({"decision": "edit", "edited_sentence": ""}, "edited_sentence", "needs the new sentence"),
        ({"decision": "accept", "instance_id": "nope"}, "instance_id", "no generated sentence"),
    ],
)
def test_bad_review_rows_name_line_and_field(tmp_path, change, field, words):
    build(tmp_path)
    review = tmp_path / "build" / "review.csv"
    rows = read_rows(review)
    rows[2].update(change)
    write_rows(review, rows)
    with pytest.raises(InputError) as caught:
        import_review(tmp_path / "build", review)
    assert (caught.value.line, caught.value.field) == (4, field)
    assert words in str(caught.value)


def test_an_edit_of_any_length_is_applied_and_the_build_stays_usable(tmp_path):
    """An edit longer than the csv module's default field limit (131,072 characters) used to
    stop the import and every later `view` and `report` of the build with `_csv.Error`."""
    from gramagents.report.runs import refresh_report
    from gramagents.runtime.run import read_manifest

    build(tmp_path)
    folder = tmp_path / "build"
    review = folder / "review.csv"
    rows = read_rows(review)
    long_edit = "My cousin can juggle " + "and juggle " * 14_000 + "all day."
    assert len(long_edit) > 150_000
    rows[1].update(decision="edit", edited_sentence=long_edit, reviewer="li")
    write_rows(review, rows)
    result = import_review(folder, review)
    assert result.manifest.status == "complete"
    assert read_manifest(folder).status == "complete"
    edited = {i.id: i for i in result.instances}[rows[1]["instance_id"]]
    assert edited.text == long_edit
    assert read_rows(review)[1]["edited_sentence"] == long_edit  # the file written back
    path, manifest, _ = refresh_report(folder)  # the report and the viewer read it
    assert manifest.status == "complete" and path.is_file()
    assert (folder / "view" / "site.json").is_file()


def test_a_viewer_that_fails_leaves_the_build_complete_and_its_site_as_it_was(
    tmp_path, monkeypatch, caplog
):
    from gramagents.report.view import build_page
    from gramagents.runtime.run import read_manifest

    build(tmp_path)
    folder = tmp_path / "build"
    page = (folder / "report.html").read_bytes()
    review = folder / "review.csv"
    rows = read_rows(review)
    rows[1].update(decision="reject", reviewer="li")
    write_rows(review, rows)

    def broken(*args, **kwargs):
        raise RuntimeError("the viewer broke")

    monkeypatch.setattr(build_page, "_csv_rows", broken)
    result = import_review(folder, review)
    assert result.manifest.status == "complete" and read_manifest(folder).status == "complete"
    assert result.manifest.review["decisions"]["reject"] == 1
    assert (folder / "report.html").read_bytes() == page
    warned = [r.getMessage() for r in caplog.records if "report.html not written" in r.getMessage()]
    assert warned and "RuntimeError: the viewer broke" in warned[0]
