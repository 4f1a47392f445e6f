#include "attention.h"
