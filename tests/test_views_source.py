"""The Source tab: highlighted sources, Python <-> device line links, host code on request."""

from __future__ import annotations

from sample_records import DEVICE, KERNEL_SOURCE, failed_record, sample_record

from tilelab.views.source import SourceWidget, binary_note, token_lines


def test_token_lines_keep_every_line_and_every_character():
    lines = token_lines(DEVICE, "cuda")

    assert ["".join(text for _, text in line) for line in lines] == DEVICE.splitlines()
    assert any(css.startswith("k") for line in lines for css, _ in line)


def test_a_python_line_links_to_the_device_lines_it_generated():
    widget = SourceWidget(sample_record())

    assert widget.linked_lines(5) == [4, 5]
    assert widget.linked_lines(6) == [6]
    assert widget.linked_lines(1) == []


def test_the_source_message_carries_both_texts_and_only_the_kernel_files_links():
    widget = SourceWidget(sample_record())
    sent = []
    widget.send = sent.append

    widget._on_message(widget, {"type": "fetch"}, [])

    (message,) = sent
    assert message["links"] == [[4, 5], [5, 5], [6, 6]]
    assert len(message["python"]) == len(KERNEL_SOURCE.splitlines())
    assert len(message["device"]) == len(DEVICE.splitlines())
    assert "host" not in message


def test_host_code_is_sent_only_when_asked_for():
    widget = SourceWidget(sample_record())
    sent = []
    widget.send = sent.append

    widget._on_message(widget, {"type": "fetch_host"}, [])

    assert sent[0]["type"] == "host" and "".join(t for _, t in sent[0]["host"][1]) == "int main() { return 0; }"
    assert widget.has_host


def test_selecting_a_python_line_is_small_synced_state():
    widget = SourceWidget(sample_record())

    widget.selected_line = 5

    assert widget.get_state()["selected_line"] == 5
    assert widget.linked_lines() == [4, 5]


def test_a_lowered_record_says_plainly_that_ptx_and_sass_are_not_available():
    assert "not available" in binary_note(sample_record()) and "lowered only" in binary_note(sample_record())
    assert "not available" in binary_note(failed_record())


def test_a_record_without_source_sends_empty_panes():
    widget = SourceWidget(failed_record())

    assert widget.payload() == {"type": "source", "python": [], "device": [], "links": []}
    assert not widget.has_host
