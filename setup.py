"""openspiel_cfrx: Deep CFR, CFR-MIX and OFTRL-CFR as OpenSpiel drop-ins."""

import re

from setuptools import find_packages, setup

REPOSITORY = "https://github.com/openspiel-cfrx/openspiel_cfrx"
# The example programs (cfrx_examples/__init__.py's PROGRAMS), each a console script
# `cfrx-<module with dashes>` and `python -m cfrx_examples.<module>`.
EXAMPLES = ("benchmark", "card_abstraction", "cfr_mix", "deep_cfr", "explore", "head_to_head", "oftrl_cfr",
            "oftrl_endgames", "openspiel_swap", "poker_vector_cfr")


def version() -> str:
    """`openspiel_cfrx.__version__`, read without importing the package."""
    text = open("openspiel_cfrx/__init__.py", encoding="utf-8").read()
    return re.search(r'^__version__ = "([^"]+)"', text, re.M).group(1)


def long_description() -> str:
    """README.md with its relative links made absolute (the index page shows it outside the repository)."""
    text = open("README.md", encoding="utf-8").read()
    return re.sub(r"\]\((?!https?://|#|mailto:)([^)\s]+)\)", rf"]({REPOSITORY}/blob/main/\1)", text)


setup(
    name="openspiel_cfrx",
    version=version(),
    author="The openspiel_cfrx authors",
    classifiers=[
        "Development Status :: 3 - Alpha",
        "Intended Audience :: Science/Research",
        "License :: OSI Approved :: Apache Software License",
        "Operating System :: POSIX :: Linux",
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Topic :: Games/Entertainment",
    ],
    keywords=["openspiel", "counterfactual regret minimization", "deep cfr", "game theory", "poker"],
    description=(
        "Deep CFR, CFR-MIX and OFTRL-CFR for OpenSpiel, with exact "
        "array-based exploitability and the games of their papers."
    ),
    long_description=long_description(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    url=REPOSITORY,
    project_urls={
        "Source": REPOSITORY,
        "Documentation": f"{REPOSITORY}/tree/main/docs",
        "Changelog": f"{REPOSITORY}/blob/main/CHANGELOG.md",
    },
    python_requires=">=3.10",
    packages=find_packages(include=["openspiel_cfrx", "openspiel_cfrx.*", "games", "games.*", "cfrx_examples"]),
    # The Libratus endgame files (games/data/libratus_endgames/, read with importlib.resources):
    # package_data puts them in the wheel, MANIFEST.in in the sdist. (Not include_package_data:
    # with it setuptools warns that the data folder is not a listed package.)
    package_data={"games": ["data/libratus_endgames/*.txt", "data/libratus_endgames/*.md"]},
    entry_points={
        "console_scripts": [
            f"cfrx-{name.replace('_', '-')}=cfrx_examples.{name}:run" for name in EXAMPLES
        ],
    },
    install_requires=[
        "open_spiel>=2.0.2",
        "torch>=2.1",
        "numpy>=2.0",  # np.vecdot
        "numba>=0.60",  # compiled showdown sweeps and regret updates (poker engine, tabular minimizers)
        "scipy>=1.10",
        "absl-py>=1.0",
        "tqdm>=4.60",
        "matplotlib>=3.6",
        "psutil>=5.9",
        "dm-tree>=0.1.8",  # imported by OpenSpiel's PyTorch NFSP (a benchmark baseline)
    ],
    extras_require={
        # eval7: independent hand evaluator; hypothesis: property sweeps (flags of the examples, nash_conv)
        "test": ["pytest>=7", "pytest-xdist>=3.5", "ruff>=0.5", "eval7>=0.1.11", "hypothesis>=6.100"],
        "docs": ["mkdocs>=1.6", "mkdocs-material>=9.5", "mkdocstrings[python]>=0.26"],  # the docs site (mkdocs.yml)
        "ray": ["ray>=2.40"],  # traversals on Ray workers (num_workers > 1)
        "tensorboard": ["tensorboard>=2.14"],  # --tensorboard_dir of the example programs
        # the strategy explorer's browser tests (tests/test_explore.py, marker `browser`): selenium drives
        # the system's headless Chromium (/usr/bin/chromium, /usr/bin/chromedriver; no browser download)
        "explore": ["selenium>=4.40"],
    },
)
