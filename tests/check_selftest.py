"""What the self-tests of the docs' checks (tests/test_check_*.py) share: the check they
run, on a repository of their own, with a text of theirs changed once; and main(),
which takes the check from the command line.

Standard library only.
"""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path


class CheckTest(unittest.TestCase):
    """A check's self-test; main() sets script, the check it runs."""

    script = None

    def run_script(self, root, *flags):
        """Runs the check on the repository at root; returns its exit code and output."""
        done = subprocess.run([sys.executable, str(self.script), *flags, str(root)],
                              capture_output=True, text=True)
        return done.returncode, done.stdout + done.stderr

    def run_on_files(self, files):
        """Runs the check on a repository of these files ({path: text, or bytes}) alone;
        returns its exit code and output."""
        with tempfile.TemporaryDirectory() as root:
            for path, content in files.items():
                target = Path(root) / path
                target.parent.mkdir(parents=True, exist_ok=True)
                if isinstance(content, bytes):
                    target.write_bytes(content)
                else:
                    target.write_text(content)
            return self.run_script(root)

    def changed(self, text, old, new):
        """text with old, which it must hold exactly once, replaced by new."""
        self.assertEqual(text.count(old), 1, old)
        return text.replace(old, new)


def main(name):
    """Runs the calling script's tests on the check named first on the command line (a
    .py file), else on tests/<name>."""
    if len(sys.argv) > 1 and sys.argv[1].endswith(".py"):
        CheckTest.script = Path(sys.argv.pop(1)).resolve()
    else:
        CheckTest.script = Path(__file__).resolve().with_name(name)
    unittest.main(module="__main__", verbosity=2)
