#ifndef ADVISOR_MEMORY_H
#define ADVISOR_MEMORY_H
#endif
