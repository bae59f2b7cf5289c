"""The bug zoo: small, documented wrong variants of the passes and analyses, drawn from the
seeds and Mesa's history, and a runner that shows the suite catching each one."""
