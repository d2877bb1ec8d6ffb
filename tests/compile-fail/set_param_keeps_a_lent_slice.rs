//! Issue 31: safe code must not hand the audio module's `set_param` a slice that a persistent model would keep
//! past its owner's life. After PARAM_PERSISTENCE_INFO registered the model parameter, the module uses the model's
//! bytes in place, so `set_param` is `unsafe`, its `# Safety` SPF's persistence contract; before, this compiled.

use lpai_direct_skel::audio::ids::PARAM_ID_MODEL;
use lpai_direct_skel::audio::module::Module;

fn load_a_local_copy(module: &mut Module) {
    let model = vec![0u8; 64];
    module.set_param(PARAM_ID_MODEL, &model);
}

fn main() {
    let _ = load_a_local_copy;
}
