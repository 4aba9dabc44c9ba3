import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

try:  # no .hypothesis/ example database in the source tree
    from hypothesis import settings

    settings.register_profile("tensorexpr", database=None)
    settings.load_profile("tensorexpr")
except ImportError:
    pass
