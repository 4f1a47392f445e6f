#include "indexing.h"
