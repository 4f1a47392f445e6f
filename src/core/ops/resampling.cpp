#include "resampling.h"
