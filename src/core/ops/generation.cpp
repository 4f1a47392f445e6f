#include "generation.h"
