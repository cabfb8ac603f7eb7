"""jax.scipy.stats.norm: the normal distribution's density, distribution,
survival and quantile functions (and their logs) with loc and scale, on
jax.scipy.special's ndtr, log_ndtr and ndtri."""

from __future__ import annotations

import math

from uir._src.core.eager import eager
from uir._src.numpy import ufuncs
from uir._src.scipy.special import _floats, log_ndtr, ndtr, ndtri


def _standard(x, loc, scale):
    x, loc, scale = _floats(x, loc, scale)
    return ufuncs.divide(ufuncs.subtract(x, loc), scale), scale


@eager
def logpdf(x, loc=0, scale=1):
    z, scale = _standard(x, loc, scale)
    return ufuncs.subtract(
        ufuncs.multiply(ufuncs.square(z), -0.5),
        ufuncs.add(ufuncs.log(scale), 0.5 * math.log(2 * math.pi)),
    )


@eager
def pdf(x, loc=0, scale=1):
    return ufuncs.exp(logpdf(x, loc, scale))


@eager
def cdf(x, loc=0, scale=1):
    return ndtr(_standard(x, loc, scale)[0])


@eager
def logcdf(x, loc=0, scale=1):
    return log_ndtr(_standard(x, loc, scale)[0])


@eager
def sf(x, loc=0, scale=1):
    return ndtr(ufuncs.negative(_standard(x, loc, scale)[0]))


@eager
def logsf(x, loc=0, scale=1):
    return log_ndtr(ufuncs.negative(_standard(x, loc, scale)[0]))


@eager
def ppf(q, loc=0, scale=1):
    q, loc, scale = _floats(q, loc, scale)
    return ufuncs.add(loc, ufuncs.multiply(scale, ndtri(q)))


@eager
def isf(q, loc=0, scale=1):
    q, loc, scale = _floats(q, loc, scale)
    return ufuncs.subtract(loc, ufuncs.multiply(scale, ndtri(q)))


__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
