"""Why the seed report's max difference grew with the channel count: a rounding model.

    python3 plots/diagrams/07_rounding.py

Draws docs/img/07_rounding.png and prints the table the lesson 07 page quotes. For
each reduction length L = cin * 3 * 3 of the U-Net layers it draws TRIALS outputs
from the seed's distributions (weights and bias uniform in [0, 1), inputs uniform in
[-1, 1)) and measures, against the exact (float64) sum:

  fp32 accumulation  products added one by one into a float32 sum with one rounding
                     per multiply-add (what every kernel of lesson 07 does);
  tf32 operands      weights and inputs first rounded to TF32 (10 mantissa bits),
                     then summed exactly (what a tensor-core TF32 convolution does,
                     e.g. PyTorch's default for cuDNN convolutions).

The seed's own mean differences are drawn on top: they follow the TF32 line, not the
fp32 one, except for the 3-channel layer, which follows fp32.
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from diagram import save  # noqa: E402
import numpy as np  # noqa: E402

SEED = 7
TRIALS = 20000
CHUNK = 1000  # outputs drawn at once: bounds memory at L x CHUNK doubles
KSIZE = 3
CHANNELS = (3, 64, 128, 256, 512, 1024)
# Mean |difference| the seed report printed, by input-channel count (both layers with
# the same cin average to the number shown when they differ).
SEED_MEAN_DIFF = {3: 1.3732371e-07, 64: (0.0016611373 + 0.0016632475) / 2,
                  128: (0.0023460574 + 0.0023465196) / 2,
                  256: (0.0033124883 + 0.0032992968) / 2,
                  512: (0.004656828 + 0.004632779) / 2, 1024: 0.0065273787}
TF32_DROPPED_BITS = 13  # float32 keeps 23 mantissa bits, TF32 10
DPI = 120

OUT_NAME = "07_rounding.png"


def to_tf32(v):
    """Round float32 values to the nearest TF32 value (10 mantissa bits)."""
    bits = v.astype(np.float32).view(np.uint32)
    half = np.uint32(1 << (TF32_DROPPED_BITS - 1))
    mask = np.uint32(~((1 << TF32_DROPPED_BITS) - 1) & 0xFFFFFFFF)
    return ((bits + half) & mask).view(np.float32)


def errors(rng, length):
    """|fp32 - exact| and |tf32 - exact| for TRIALS outputs of `length` terms."""
    e32, etf = [], []
    for _ in range(TRIALS // CHUNK):
        w = rng.uniform(0.0, 1.0, (length, CHUNK)).astype(np.float32)
        x = rng.uniform(-1.0, 1.0, (length, CHUNK)).astype(np.float32)
        bias = rng.uniform(0.0, 1.0, CHUNK).astype(np.float32)
        products = w.astype(np.float64) * x  # exact: 24 + 24 bits fit in 53
        exact = bias + products.sum(axis=0)
        acc = bias.copy()
        for term in products:  # one rounding per step, like fmaf
            acc = (acc + term).astype(np.float32)
        tf32 = bias + (to_tf32(w).astype(np.float64) * to_tf32(x)).sum(axis=0)
        e32.append(np.abs(acc - exact))
        etf.append(np.abs(tf32 - exact))
    return np.concatenate(e32), np.concatenate(etf)


def main():
    rng = np.random.default_rng(SEED)
    lengths, fp32_mean, tf32_mean = [], [], []
    print(f"{'cin':>5} {'L':>6} {'fp32 mean':>10} {'fp32 max':>10} "
          f"{'tf32 mean':>10} {'tf32 max':>10} {'seed mean':>10}")
    for cin in CHANNELS:
        length = cin * KSIZE * KSIZE
        e32, etf = errors(rng, length)
        lengths.append(length)
        fp32_mean.append(e32.mean())
        tf32_mean.append(etf.mean())
        print(f"{cin:5d} {length:6d} {e32.mean():10.2e} {e32.max():10.2e} "
              f"{etf.mean():10.2e} {etf.max():10.2e} {SEED_MEAN_DIFF[cin]:10.2e}")

    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.loglog(lengths, tf32_mean, "s-", label="model: TF32 operands, exact sum")
    ax.loglog(lengths, fp32_mean, "o-", label="model: fp32 accumulation (fmaf)")
    ax.loglog([c * KSIZE * KSIZE for c in CHANNELS], list(SEED_MEAN_DIFF.values()), "k*",
              markersize=12, label="seed report: mean |difference|")
    ax.set_xlabel("terms per output, L = cin x 3 x 3")
    ax.set_ylabel("mean |error| per output")
    ax.set_title("Seed weights U[0,1), inputs U[-1,1): where does the difference come from?",
                 fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=9)
    fig.tight_layout()
    save(fig, OUT_NAME, dpi=DPI)


if __name__ == "__main__":
    main()
