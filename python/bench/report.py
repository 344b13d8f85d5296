"""The benchmarks' output: a markdown table on stdout, and the same rows in a CSV file
when asked (--csv), with the GPU and the software that made them."""

import argparse
import csv

import torch


def argument_parser(doc):
    """A script's flags: its docstring as the help, and --csv."""
    p = argparse.ArgumentParser(description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--csv", help="also write the rows to this CSV file")
    return p


def describe_device():
    """One line: the GPU, its compute capability, CUDA and PyTorch."""
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return (f"{props.name}, compute capability {props.major}.{props.minor}, CUDA "
            f"{torch.version.cuda}, PyTorch {torch.__version__}, cuDNN "
            f"{torch.backends.cudnn.version()}")


def _cell(value):
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def print_table(columns, rows):
    """rows: dicts keyed by columns."""
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(_cell(row[c]) for c in columns) + " |")


def write_csv(path, columns, rows):
    """The rows, with the device in each, into a new CSV file at path."""
    device = torch.cuda.get_device_name(torch.cuda.current_device())
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["device", *columns])
        writer.writeheader()
        for row in rows:
            writer.writerow({"device": device, **{c: row[c] for c in columns}})
