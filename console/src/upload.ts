import { useState } from 'react';
import { asApiError, refreshOnce, reportSessionLost, type ApiError } from './api';

/** One attempt: XMLHttpRequest, since fetch reports no upload progress. Resolves with the status and the JSON body. */
function send(url: string, form: FormData, onProgress: (fraction: number) => void): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', url);
    request.responseType = 'json';
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    request.onload = () => resolve({ status: request.status, body: request.response as unknown });
    request.onerror = () => reject(new Error('the upload failed: the connection was lost'));
    request.send(form);
  });
}

/**
 * Posts `form` as multipart/form-data, reporting progress from 0 to 1, renewing an expired session once as every
 * other call does. Resolves with the host's answer, or throws its ApiError.
 */
export async function uploadForm<T>(url: string, form: FormData, onProgress: (fraction: number) => void): Promise<T> {
  let answer = await send(url, form, onProgress);
  if (answer.status === 401) {
    if (!(await refreshOnce())) {
      reportSessionLost();
      throw asApiError(answer.body, answer.status);
    }
    answer = await send(url, form, onProgress);
  }
  if (answer.status < 200 || answer.status >= 300) throw asApiError(answer.body, answer.status);
  return answer.body as T;
}

/** Uploads one file as the `file` part (the knowledge upload route's field). */
export function uploadFile<T>(url: string, file: File, onProgress: (fraction: number) => void): Promise<T> {
  const form = new FormData();
  form.append('file', file);
  return uploadForm<T>(url, form, onProgress);
}

/**
 * An upload form's state: `send` posts the form, showing progress while it goes and keeping the host's refusal,
 * and resolves with the answer (undefined when refused), so the form can show both and keep what was chosen.
 */
export function useUpload() {
  const [progress, setProgress] = useState<number>();
  const [error, setError] = useState<ApiError>();
  async function send<T>(url: string, form: FormData): Promise<T | undefined> {
    setError(undefined);
    setProgress(0);
    try {
      return await uploadForm<T>(url, form, setProgress);
    } catch (failure) {
      setError(failure as ApiError);
      return undefined;
    } finally {
      setProgress(undefined);
    }
  }
  return { progress, error, send };
}
