"""Games registered with pyspiel by `import games`.

Importing this package registers every game below with `pyspiel.register_game`,
after which `pyspiel.load_game("<name>(...)")` works as for built-in games.
"""
from games import poker, poker_encoding  # noqa: F401  (registers flop_holdem, hulh and the poker network input)

from . import hunl_endgame, nest, team_goofspiel  # noqa: F401  (registers hunl_endgame, team_goofspiel, nest)
