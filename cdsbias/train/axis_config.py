"""The recipe keys that name bias axes: the one a run mitigates and the ones it measures."""

from __future__ import annotations

from dataclasses import dataclass, field

from cdsbias.axes import DEFAULT_AXIS, BiasAxis, get_axes, get_axis


@dataclass
class AxisConfig:
    """Which bias axis the run mitigates, and which axes it scores (cdsbias.axes)."""

    bias_axis: str = field(
        default=DEFAULT_AXIS,
        metadata={
            "help": "The axis the run mitigates: gender (default), race, religion, age, "
            "disability, sexual_orientation, nationality, physical_appearance, "
            "socioeconomic (docs/axes.md: which methods apply to which), gender, race or "
            "religion with bias-bench's own word lists (race@bias-bench, ...), or an "
            "attribute file of your own (FILE.tsv with a header of group names, or "
            "bias-bench's FILE.json[#key]). CDS, the post-hoc methods, Self-Debias and "
            "Context-Debias read it (docs/axes.md)."
        },
    )
    bias_axes: list[str] | None = field(
        default=None,
        metadata={
            "help": "The axes scored before training and at every checkpoint, whatever "
            "the run mitigates (default: bias_axis alone), e.g. [gender, race, religion]: "
            "the cross-axis matrix of `cdsbias compare`."
        },
    )

    def __post_init__(self) -> None:
        self.axis()
        self.axes()

    def axis(self) -> BiasAxis:
        """The mitigated axis."""
        return get_axis(self.bias_axis)

    def axes(self) -> list[BiasAxis]:
        """The measured axes, the mitigated one when ``bias_axes`` is not set."""
        if self.bias_axes is None:
            return [self.axis()]
        return get_axes(self.bias_axes)
