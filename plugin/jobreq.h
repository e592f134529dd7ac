#ifndef ADVISOR_JOBREQ_H
#define ADVISOR_JOBREQ_H
#endif
