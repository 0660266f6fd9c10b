import csv
import io

from app.exports.csv_stream import iter_csv


def _parse(chunks):
    return list(csv.reader(io.StringIO("".join(chunks))))


def test_given_rows_when_streamed_then_chunks_hold_at_most_rows_per_chunk_rows():
    rows = [[i, f"name{i}"] for i in range(25)]
    chunks = list(iter_csv(["N", "Name"], rows, rows_per_chunk=10))
    # header + 10 rows, 10 rows, 5 rows
    assert len(chunks) == 3
    parsed = _parse(chunks)
    assert parsed[0] == ["N", "Name"]
    assert parsed[1:] == [[str(i), f"name{i}"] for i in range(25)]


def test_given_commas_quotes_and_newlines_when_streamed_then_csv_round_trips():
    rows = [['a,b', 'say "hi"', "line1\nline2"]]
    assert _parse(iter_csv(["A", "B", "C"], rows))[1] == ['a,b', 'say "hi"', "line1\nline2"]


def test_given_formula_cell_when_streamed_then_written_neutralised():
    parsed = _parse(iter_csv(["A", "B"], [["=cmd()", "-5"]]))
    assert parsed[1] == ["'=cmd()", "-5"]


def test_given_no_rows_when_streamed_then_only_header_is_written():
    assert "".join(iter_csv(["A", "B"], [])) == "A,B\r\n"


def test_given_generator_of_rows_when_streamed_then_rows_are_consumed_lazily():
    consumed = []

    def rows():
        for i in range(30):
            consumed.append(i)
            yield [i]

    stream = iter_csv(["N"], rows(), rows_per_chunk=10)
    next(stream)
    assert len(consumed) == 10
