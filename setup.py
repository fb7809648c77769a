"""openspiel_cfrx: Deep CFR, CFR-MIX and OFTRL-CFR as OpenSpiel drop-ins."""

from setuptools import find_packages, setup

setup(
    name="openspiel_cfrx",
    version="0.2.0",
    description=(
        "Deep CFR, CFR-MIX and OFTRL-CFR for OpenSpiel, with exact "
        "array-based exploitability and the games of their papers."
    ),
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    url="https://github.com/openspiel-cfrx/openspiel_cfrx",
    project_urls={
        "Source": "https://github.com/openspiel-cfrx/openspiel_cfrx",
        "Documentation": "https://github.com/openspiel-cfrx/openspiel_cfrx/tree/main/docs",
        "Changelog": "https://github.com/openspiel-cfrx/openspiel_cfrx/blob/main/CHANGELOG.md",
    },
    python_requires=">=3.10",
    packages=find_packages(include=["openspiel_cfrx", "openspiel_cfrx.*", "games", "games.*"]),
    # The Libratus endgame files (games/data/libratus_endgames/, read with importlib.resources):
    # package_data puts them in the wheel, MANIFEST.in in the sdist. (Not include_package_data:
    # with it setuptools warns that the data folder is not a listed package.)
    package_data={"games": ["data/libratus_endgames/*.txt", "data/libratus_endgames/*.md"]},
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
    },
)
