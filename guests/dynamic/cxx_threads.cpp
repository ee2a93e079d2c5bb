// SPDX-License-Identifier: MIT OR Apache-2.0
// libstdc++ under the dynamic loader: std::thread, std::mutex, containers,
// and an exception thrown and caught (the unwinder reads .eh_frame of every
// loaded object through dl_iterate_phdr).
#include <thread>
#include <vector>
#include <mutex>
#include <iostream>
#include <string>
#include <map>
int main(){ std::mutex m; std::map<int,std::string> out; std::vector<std::thread> ts;
 for(int i=0;i<4;i++) ts.emplace_back([&,i]{ std::string s(i+1,'x'); std::lock_guard<std::mutex> g(m); out[i]=s; });
 for(auto&t:ts) t.join(); for(auto&[k,v]:out) std::cout<<k<<":"<<v<<"\n";
 try { throw std::runtime_error("boom"); } catch(const std::exception&e){ std::cout<<"caught "<<e.what()<<"\n"; }
 return 4;}
