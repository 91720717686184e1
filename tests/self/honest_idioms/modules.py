"""Idioms in modules.py."""

from tests.self.honest_idioms import Idiom

IDIOMS = [
    Idiom(
        "layers registered by name in an nn.Module: setattr(self, str(i), ...) and getattr(self, str(i))",
        "students write their own layer container; its children are named 0, 1, ... as in "
        "nn.ModuleList, since the handout fixes the parameter names layers.<i>.weight",
        (('''class Cruncher(nn.Module):
''', '''class Layers(nn.Module):
    """Layers called in order, registered by name."""

    def __init__(self, layers: list[nn.Module]) -> None:
        super().__init__()
        for i, layer in enumerate(layers):
            setattr(self, str(i), layer)
        self.count = len(layers)

    def __len__(self) -> int:
        return self.count

    def __iter__(self):
        return (getattr(self, str(i)) for i in range(self.count))


class Cruncher(nn.Module):
'''),
         ("        self.layers = nn.ModuleList([Linear(dim, dim) for _ in range(num_layers)])\n",
          "        self.layers = Layers([Linear(dim, dim) for _ in range(num_layers)])\n"))),
    Idiom(
        "a @torch.no_grad() decorator on the initialisation helper",
        "students initialise weights under no_grad, as the notes' training loop does for updates",
        (('''        std = 1.0 / math.sqrt(input_dim)
        # a/b are absolute cut-offs: ±3 std, not ±3.
        nn.init.trunc_normal_(self.weight, mean=0.0, std=std, a=-3.0 * std, b=3.0 * std)
''', '''        _init_weight(self.weight, input_dim)
'''),
         ('''class Linear(nn.Module):
''', '''@torch.no_grad()
def _init_weight(weight: Tensor, input_dim: int) -> None:
    std = 1.0 / math.sqrt(input_dim)
    # a/b are absolute cut-offs: ±3 std, not ±3.
    nn.init.trunc_normal_(weight, mean=0.0, std=std, a=-3.0 * std, b=3.0 * std)


class Linear(nn.Module):
'''))),
    Idiom(
        "a base class of theirs with super().__init_subclass__(**kw), type(self).__name__ in errors, a @property",
        "students share checks between their layers through a base class that registers each subclass",
        (('''class Linear(nn.Module):
''', '''class Checked(nn.Module):
    """A layer that checks the width of its input."""

    kinds: list[str] = []

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        Checked.kinds.append(cls.__name__)

    @property
    def width(self) -> int:
        return self.input_dim

    def check_width(self, x: Tensor) -> None:
        if x.shape[-1] != self.width:
            raise ValueError(f"{type(self).__name__}: expected last dim {self.width}, "
                             f"got input of shape {tuple(x.shape)}")


class Linear(Checked):
'''),
         ('''        if x.shape[-1] != self.input_dim:
            raise ValueError(
                f"expected last dim {self.input_dim}, got input of shape {tuple(x.shape)}"
            )
''', '''        self.check_width(x)
'''))),
]
