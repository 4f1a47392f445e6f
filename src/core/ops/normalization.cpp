#include "normalization.h"
