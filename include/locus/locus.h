// locus/locus.h — everything a C++ compiler, DSL or JIT needs from locus.
#pragma once
#include "locus/capture.h"
#include "locus/frame.h"
#include "locus/symbolize.h"
#include "locus/traceback.h"
