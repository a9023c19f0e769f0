import io

from repomapper.progress import StderrProgress


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_is_drawn_on_a_terminal_once_the_scan_is_slow():
    stream = Tty()
    progress = StderrProgress("mapping", stream=stream, delay=0.0)
    progress(0, 10)
    progress(5, 10)
    progress(10, 10)
    assert "mapping" in stream.getvalue()


def test_no_progress_when_not_a_terminal_or_when_fast():
    pipe = io.StringIO()
    progress = StderrProgress("mapping", stream=pipe, delay=0.0)
    progress(5, 10)
    progress(10, 10)
    assert pipe.getvalue() == ""
    tty = Tty()
    quick = StderrProgress("mapping", stream=tty, delay=3600)
    quick(5, 10)
    quick(10, 10)
    assert tty.getvalue() == ""
