# SPDX-License-Identifier: Apache-2.0
"""Shared by bench/serving_bench.py and bench/choices_bench.py: config variants of
example models and RESULTS.md sections."""
import os
import shutil
import time


def copy_model(repo, model, name, edit):
    """Copies repo/model to repo/name, renamed, with its config.pbtxt passed
    through edit(text) -> text. Returns name."""
    dst = os.path.join(repo, name)
    shutil.copytree(os.path.join(repo, model), dst)
    path = os.path.join(dst, "config.pbtxt")
    with open(path) as f:
        text = f.read()
    text = text.replace('name: "%s"' % model, 'name: "%s"' % name)
    with open(path, "w") as f:
        f.write(edit(text))
    return name


def append_section(results, title, header, lines):
    """Appends `## title, <UTC time>`, the header lines and `lines` to RESULTS.md."""
    with open(results, "a") as f:
        f.write("\n## %s, %s\n\n" % (title, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
        f.write(header + "\n")
        for line in lines:
            f.write(line + "\n")
