"""What every diagram script here shares: its panels' frame, where its PNG goes and how
it is written."""
from pathlib import Path

IMG_DIR = Path(__file__).resolve().parents[2] / "docs" / "img"
DPI = 110


def frame(ax, xlim, ylim):
    """A panel drawn in data units: these limits, a unit as long across as up, no axes."""
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")


def save(fig, name, dpi=DPI, metadata=None):
    """Writes fig to docs/img/<name> under a temporary name, then renames it, so a
    reader never sees half a file; metadata: a results plot's record of its rows
    (plots/provenance.py)."""
    IMG_DIR.mkdir(parents=True, exist_ok=True)
    path = IMG_DIR / name
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=dpi, metadata=metadata)
    tmp.replace(path)
    print(f"wrote {path}")
