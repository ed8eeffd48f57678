// callsite/callsite.h — everything a C++ compiler, DSL or JIT needs from callsite.
#pragma once
#include "callsite/capture.h"
#include "callsite/frame.h"
#include "callsite/symbolize.h"
#include "callsite/traceback.h"
