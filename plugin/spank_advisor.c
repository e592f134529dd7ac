#include "config.h"
#include <slurm/spank.h>
SPANK_PLUGIN(advisor, 1);
