#ifndef ADVISOR_LAYOUT_H
#define ADVISOR_LAYOUT_H
#endif
