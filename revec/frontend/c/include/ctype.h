/* revec's <ctype.h>, for code revec does not read (argument parsing in main) */
#ifndef __REVEC_CTYPE_H
#define __REVEC_CTYPE_H
int isdigit(int);
int isspace(int);
int isalpha(int);
int isalnum(int);
int isupper(int);
int islower(int);
int toupper(int);
int tolower(int);
#endif
