"""A power-law fit in log space with numpy, local imports, and a small class of its own."""

import math
from typing import Sequence


class Fit:
    """A fitted law y = a * x ** b, with the data it came from."""

    registry = []
    default_base = 10.0

    def __init__(self, xs: Sequence[float], ys: Sequence[float]):
        import numpy as np  # a local import, as students write when only one function needs it
        self.xs = np.asarray(xs, dtype=np.float64)
        self.ys = np.asarray(ys, dtype=np.float64)
        self._params = None
        self.history = []
        Fit.registry.append(self)

    @property
    def params(self):
        if self._params is None:
            import numpy as np
            b, log_a = np.polyfit(np.log(self.xs), np.log(self.ys), 1)
            self._params = (math.exp(log_a), b)
        return self._params

    @params.setter
    def params(self, value):
        self._params = tuple(value)

    def predict(self, x: float) -> float:
        a, b = self.params
        self.history.append(x)
        return a * x ** b

    def __len__(self):
        return len(self.xs)

    def __repr__(self):
        a, b = self.params
        return f"{type(self).__name__}(a={a:.3g}, b={b:.3g}, n={len(self)})"


def best_of(fits):
    best = min(fits, key=lambda f: abs(f.params[1]))
    best.label = "flattest"
    return best


Fit.default_base = 2.0  # a store on its own class


if __name__ == "__main__":
    xs = [1e3, 1e4, 1e5, 1e6]
    fit = Fit(xs, [2.0 * x ** -0.3 for x in xs])
    a, b = fit.params
    assert math.isclose(a, 2.0, rel_tol=1e-9) and math.isclose(b, -0.3, rel_tol=1e-9)
    fit.params = (a, b)
    other = Fit(xs, [x ** -0.1 for x in xs])
    assert best_of([fit, other]) is other and other.label == "flattest"
    print("ok", repr(fit), round(fit.predict(1e7), 6), Fit.default_base)
