#include <dlfcn.h>
#include <stdio.h>
typedef struct { unsigned fieldId, scopeId; long long ts, lat; int vt, ret; union { double d; unsigned ui; unsigned long ul; unsigned long long ull; long long sll; } v; } FV;
int main(){
  void* l=dlopen("libnvidia-ml.so.1",RTLD_NOW); if(!l){printf("no nvml\n");return 1;}
  int(*init)()=dlsym(l,"nvmlInit_v2"); int(*h)(unsigned,void**)=dlsym(l,"nvmlDeviceGetHandleByIndex_v2");
  int(*fv)(void*,int,FV*)=dlsym(l,"nvmlDeviceGetFieldValues"); int(*ver)(void*,unsigned,unsigned*)=dlsym(l,"nvmlDeviceGetNvLinkVersion");
  init(); void* d; h(0,&d);
  unsigned ids[]={84,90,91,164,165,166,167,168,169,170};
  for(int i=0;i<10;i++){ for(unsigned sc=0; sc<2; sc++){ FV f={0}; f.fieldId=ids[i]; f.scopeId=sc; int r=fv(d,1,&f); printf("field %u scope %u: rc %d ret %d type %d ui %u ull %llu d %g\n",ids[i],sc,r,f.ret,f.vt,f.v.ui,f.v.ull,f.v.d);} }
  unsigned v=0; int r=ver(d,0,&v); printf("nvlink version link0: rc %d v %u\n",r,v);
  return 0;
}
